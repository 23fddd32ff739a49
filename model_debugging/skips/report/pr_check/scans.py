"""The scans of a check: the base revision, head's test files on base's library, and head.

Base is exported with everything the scan reads (``scanned_paths``), so that an unchanged tree
gives the same result on both sides. The middle scan is needed only when the change touches both
the test files and the library: it is base's export with head's test files copied in. Head is
scanned last: its test files are those of the middle scan (or of base, when only the library
changed), so the parse cache answers it with a rescan of the models a library change concerns,
which also says which changed files each of them read.

Given reports of test runs, every side is joined with the same reports (``skips/observed``); with
``inert``, every side also gets the pairs found inert from its sources (``skips/inert``). The rows
then use each side's combined status (see ``introduced.py``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from model_debugging.skips.incremental.memory import ScanStats
from model_debugging.skips.inert import find_static_inert
from model_debugging.skips.observed import Report, with_observations
from model_debugging.skips.report.pr_check.git_snapshot import changed_files, export_revision
from model_debugging.skips.report.pr_check.introduced import Scans
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.scan import scan_repository
from model_debugging.skips.source.checkout import check_checkout
from model_debugging.skips.source.conftest_notes import notes_about
from model_debugging.skips.source.guard_helpers import edited_guards
from model_debugging.skips.source.scanned_paths import LIBRARY_FOLDER, is_library_path, scanned_folders
from model_debugging.skips.source.settings import DEFAULT_SETTINGS
from model_debugging.skips.work.progress import ScanProgress


def scan_sides(
    repo: Path,
    commit: str,
    scratch: Path,
    *,
    progress: ScanProgress | None = None,
    observed: Sequence[Report] | None = None,
    inert: bool = False,
) -> Scans:
    """Scan ``commit`` of ``repo`` (exported under ``scratch``) and ``repo``'s working tree; join
    each side with the ``observed`` reports and, with ``inert``, the pairs inert in its sources."""
    folders = scanned_folders(DEFAULT_SETTINGS)
    base_tree = export_revision(repo, commit, scratch / "base", folders)
    changed = changed_files(repo, commit, folders)
    library = tuple(sorted(path for path in changed if is_library_path(path)))
    tests = tuple(sorted(path for path in changed if not is_library_path(path)))

    def joined(tree: Path, result: ScanResult) -> ScanResult:
        if observed is None and not inert:
            return result
        found = None
        if inert:
            _say(progress, "finding inert tests (every model is evaluated again)")
            found = find_static_inert(tree, result.tests)
        return with_observations(result, observed or (), tree, DEFAULT_SETTINGS, found)

    # the export is a temporary folder: a message naming it would name a path the user never gave
    check_checkout(base_tree, DEFAULT_SETTINGS, described=f"the base revision {commit[:12]}")
    _say(progress, f"base {commit[:12]}:")
    base = joined(base_tree, scan_repository(base_tree, progress=progress))
    tests_only = None
    if library and tests:
        _say(progress, "head's test files on base's library:")
        mixed = _with_test_files_of(base_tree, repo, folders)
        tests_only = joined(mixed, scan_repository(mixed, progress=progress))
    _say(progress, "head (working tree):")
    stats = ScanStats()
    head = joined(repo, scan_repository(repo, progress=progress, stats=stats))
    if tests_only is None:
        tests_only = head if tests else base
    causes = stats.library_causes if stats.answer == "rescan" else None
    reports = tuple(report.path for report in observed or ())
    # pytest also loads the checkout's root conftest.py, outside the scanned folders
    touched = changed | changed_files(repo, commit, ["conftest.py"])
    conftests = notes_about(
        head.notes, sorted(path for path in touched if PurePosixPath(path).name == "conftest.py")
    )
    guards = edited_guards(base_tree, repo, changed)
    return Scans(base, tests_only, head, tests, library, causes, reports, inert, conftests, guards)


def _say(progress: ScanProgress | None, text: str) -> None:
    if progress is not None:
        progress.line(text)


def _with_test_files_of(tree: Path, repo: Path, folders: tuple[str, ...]) -> Path:
    """``tree`` with its test folders replaced by ``repo``'s (their Python files: all a scan reads)."""
    for folder in folders:
        if folder == LIBRARY_FOLDER:
            continue
        shutil.rmtree(tree / folder, ignore_errors=True)
        if (repo / folder).is_dir():
            shutil.copytree(repo / folder, tree / folder, ignore=_not_python, symlinks=True)
    return tree


def _not_python(folder: str, names: list[str]) -> set[str]:
    return {
        name
        for name in names
        if name in ("__pycache__", ".git")
        or (not name.endswith(".py") and not os.path.isdir(os.path.join(folder, name)))
    }
