"""Which commit a scan reads: the checkout's ``HEAD``, when the folders the scan reads are exactly it.

A checkout that is no git repository of its own (an exported tree, a folder inside another
repository), a missing ``git``, or local changes (modified, deleted or untracked files) under the
scanned folders give None: the commit would not say what was scanned.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from model_debugging.skips.source.git_reads import run_git


def _git(repo: Path, *args: str) -> str | None:
    """git's output, or None when git is missing or fails (no repository, no commit yet)."""
    try:
        result = run_git(repo, *args)
    except OSError:  # no git on this machine
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def scanned_commit(repo: str | os.PathLike, folders: Sequence[str]) -> str | None:
    """The full id of ``repo``'s ``HEAD`` when ``repo`` is a git checkout's root and ``folders`` (relative
    to it) hold no change against ``HEAD``; None otherwise."""
    repo = Path(repo)
    root = _git(repo, "rev-parse", "--show-toplevel")
    if root is None or Path(root).resolve() != repo.resolve():
        return None
    commit = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    changes = _git(repo, "status", "--porcelain", "--untracked-files=normal", "--", *folders)
    return commit if commit and changes == "" else None
