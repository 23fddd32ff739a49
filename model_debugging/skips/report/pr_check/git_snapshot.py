"""Read a git checkout's base revision without touching its work tree or index.

``git archive`` streams the revision's files (nothing is checked out, no worktree is registered,
the index is never written); ``git diff`` lists what the working tree changed since, with
optional locks off so that not even the index's stat cache is refreshed.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from model_debugging.skips.source.git_reads import READ_ONLY_ENV, run_git


class GitError(RuntimeError):
    """A git command failed; the message names the repository, the revision and git's own words."""


def _one_line(text: str) -> str:
    """git's words on one line (it may write several: "fatal: ...", a blank line, a hint)."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _git(repo: Path, *args: str) -> str:
    result = run_git(repo, *args)
    if result.returncode != 0:
        raise GitError(f"{repo}: git {' '.join(args)} failed: {_one_line(result.stderr)}")
    return result.stdout.strip()


def resolve_commit(repo: str | os.PathLike, ref: str, *, fetch_from: str | None = None) -> str:
    """The full commit id of ``ref``; a clear error when ``repo`` is no git checkout's root or ``ref`` is unknown.

    With ``fetch_from`` (a remote), a ``ref`` the repository does not hold is fetched first, alone
    and without history (``git fetch --depth=1``): a shallow CI checkout then gets only the base's
    files, not the project's history."""
    repo = Path(repo)
    root = _git(repo, "rev-parse", "--show-toplevel")  # fails with git's own "not a git repository"
    if Path(root).resolve() != repo.resolve():
        raise GitError(f"{repo} is a folder inside the checkout {root}: --repo must be the checkout's root")
    try:
        return _git(repo, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    except GitError:
        if fetch_from is None:
            raise GitError(
                f"{repo}: unknown revision {ref!r}{_branches_held(repo)}; is it fetched? (on CI, check out "
                "with fetch-depth: 0, or pass --fetch_base_from origin)"
            ) from None
    _git(repo, "fetch", "--quiet", "--depth=1", "--no-tags", "--end-of-options", fetch_from, ref)
    return _git(repo, "rev-parse", "--verify", "FETCH_HEAD^{commit}")


def _branches_held(repo: Path, shown: int = 5) -> str:
    """`` (branches here: master, pr)``: what a mistyped or absent ``--base`` could have named (a
    repository made with ``git init`` calls its first branch ``master`` unless told otherwise)."""
    names = _git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes").split()
    if not names:
        return " (the repository has no branch yet)"
    more = f", and {len(names) - shown} more" if len(names) > shown else ""
    return f" (branches here: {', '.join(names[:shown])}{more})"


@dataclass(frozen=True)
class BaseRevision:
    """The commit a change is compared with: where the working tree's commit (HEAD) forked from
    the base ref the user named, as a pull request's diff is taken (``git diff base...HEAD``).

    ``later_commits`` counts the ref's commits after the fork point (0 when HEAD holds the ref's
    tip); it is None when the checkout holds no history joining HEAD to the ref (a shallow clone
    of a branch), and the ref's tip itself is then compared with."""

    ref: str
    commit: str
    later_commits: int | None


def _parents(repo: Path, commit: str) -> list[str]:
    """The parents a commit object names, also those a shallow clone does not hold."""
    header = _git(repo, "cat-file", "commit", commit).split("\n\n", 1)[0]
    return [line.split()[1] for line in header.splitlines() if line.startswith("parent ")]


def fork_point(repo: str | os.PathLike, ref: str, tip: str) -> BaseRevision:
    """Where HEAD forked from ``tip`` (the commit of ``ref``): the commits ``ref`` gained since
    are not part of the change, so they must not show as it, reversed."""
    repo = Path(repo)
    found = run_git(repo, "merge-base", "--end-of-options", tip, "HEAD")
    if found.returncode == 0:
        commit = found.stdout.strip()
        later = 0 if commit == tip else int(_git(repo, "rev-list", "--count", f"{commit}..{tip}"))
        return BaseRevision(ref, commit, later)
    if found.returncode != 1 or found.stderr.strip():
        raise GitError(f"{repo}: git merge-base {tip} HEAD failed: {_one_line(found.stderr)}")
    # no common history at hand: a shallow checkout of a pull request's merge commit still names
    # the base as a parent
    return BaseRevision(ref, tip, 0 if tip in _parents(repo, "HEAD") else None)


def export_revision(
    repo: str | os.PathLike, commit: str, destination: str | os.PathLike, folders: Sequence[str]
) -> Path:
    """Write the files of ``folders`` at ``commit`` of ``repo`` under ``destination`` and return it.

    A folder the revision does not have is left out (a checkout without ``src/`` is scanned as such)."""
    repo, destination = Path(repo), Path(destination)
    present = _git(repo, "ls-tree", "--name-only", "--end-of-options", commit, "--", *folders).splitlines()
    if not present:
        raise GitError(
            f"{repo}: revision {commit} has none of {', '.join(folders)}: not a transformers checkout"
        )
    destination.mkdir(parents=True, exist_ok=True)
    command = ["git", "-C", str(repo), "archive", "--format=tar", commit, "--", *present]
    unreadable = None
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=READ_ONLY_ENV
    ) as process:
        try:
            with tarfile.open(fileobj=process.stdout, mode="r|") as archive:
                archive.extractall(destination, filter="data")
        except tarfile.ReadError as error:
            unreadable = error  # usually git failed before writing anything: its stderr says why
            process.stdout.read()
        stderr = process.stderr.read().decode(errors="replace")
    if process.returncode != 0 or unreadable:
        why = _one_line(stderr) or f"unreadable archive: {unreadable}"
        raise GitError(f"{repo}: git archive {commit} -- {' '.join(present)} failed: {why}")
    return destination


def changed_files(repo: str | os.PathLike, commit: str, folders: Sequence[str]) -> set[str]:
    """Paths under ``folders`` that differ between ``commit`` and the working tree (staged, unstaged
    and untracked, deleted included), relative to ``repo``."""
    repo = Path(repo)
    tracked = _git(repo, "diff", "--name-only", "--relative", "--no-renames", "-z", commit, "--", *folders)
    untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z", "--", *folders)
    return {path for path in (tracked + "\0" + untracked).split("\0") if path}
