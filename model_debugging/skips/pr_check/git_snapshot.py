"""Materialise one revision of a git checkout into a directory without touching its work tree or index.

``git archive`` streams the revision's files; nothing is checked out, no worktree is registered,
and the index is never written.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path

# the analyzer reads only the test suite
SCANNED_PATHS = ("tests",)


class GitError(RuntimeError):
    """A git command failed; the message names the repository, the revision and git's own words."""


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise GitError(f"{repo}: git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def resolve_commit(repo: str | os.PathLike, ref: str) -> str:
    """The full commit id of ``ref``; a clear error when ``repo`` is no git checkout or ``ref`` is unknown."""
    repo = Path(repo)
    _git(repo, "rev-parse", "--git-dir")  # fails with git's own "not a git repository"
    try:
        return _git(repo, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    except GitError:
        raise GitError(
            f"{repo}: unknown revision {ref!r}; is it fetched? (on CI, check out with fetch-depth: 0)"
        ) from None


def export_revision(
    repo: str | os.PathLike, ref: str, destination: str | os.PathLike, paths: Sequence[str] = SCANNED_PATHS
) -> Path:
    """Write the files of ``paths`` at revision ``ref`` of ``repo`` under ``destination`` and return it."""
    repo, destination = Path(repo), Path(destination)
    commit = resolve_commit(repo, ref)
    destination.mkdir(parents=True, exist_ok=True)
    command = ["git", "-C", str(repo), "archive", "--format=tar", commit, "--", *paths]
    unreadable = None
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        try:
            with tarfile.open(fileobj=process.stdout, mode="r|") as archive:
                archive.extractall(destination, filter="data")
        except tarfile.ReadError as error:
            unreadable = error  # usually git failed before writing anything: its stderr says why
            process.stdout.read()
        stderr = process.stderr.read().decode(errors="replace")
    if process.returncode != 0 or unreadable:
        why = stderr.strip() or f"unreadable archive: {unreadable}"
        raise GitError(f"{repo}: git archive {ref} -- {' '.join(paths)} failed: {why}")
    return destination
