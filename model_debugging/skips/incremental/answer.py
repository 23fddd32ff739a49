"""A scan answered from the cache when it can be: the kept result of a scan of the same files (a full
scan's, or for a single test that test's) when no file it read changed, else evaluated again
(``evaluate_again.py``): the kept result of a scan with the same settings and common test files is
the start of a rescan, whatever test or library files changed since.
"""

from __future__ import annotations

from model_debugging.skips.decide.scope import ScanScope
from model_debugging.skips.incremental.memory import (
    Checkout,
    ScanStats,
    changed_library_files,
    changed_test_files,
    kept_snapshot,
)
from model_debugging.skips.incremental.snapshot import ScanSnapshot, get_snapshot, single_test_key
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.work.entries import ParseCache
from model_debugging.skips.work.progress import ScanProgress


def cached_scan(
    scope: ScanScope,
    cache: ParseCache,
    *,
    test_method_name: str | None,
    progress: ScanProgress | None,
    stats: ScanStats,
) -> ScanResult:
    """The result of :func:`~model_debugging.skips.decide.scan.scan` for ``scope``, from ``cache`` when
    a scan of the same test files is kept there: a full scan's whole result (a single test is picked
    by the caller), else, for ``test_method_name``, a scan of that test alone. A full scan keeps its
    snapshot and memory for the next one; a single-test scan keeps its snapshot, answered again only
    while no file it read changed."""
    paths = sorted(set(scope.common_paths + scope.model_files))
    checkout = Checkout.read(scope.repo, paths, scope.common_paths, scope.settings, scope.pytest, cache)
    snapshot = kept_snapshot(get_snapshot(cache, checkout.lookup), checkout)
    changes = _changes(scope, snapshot, checkout)
    checkout.save_index()
    if snapshot is not None and changes == (set(), set()):
        return _as_kept(snapshot, stats, progress)
    if test_method_name is not None:
        single = kept_snapshot(
            get_snapshot(cache, single_test_key(checkout.lookup, test_method_name)), checkout
        )
        if single is not None and _changes(scope, single, checkout) == (set(), set()):
            return _as_kept(single, stats, progress)
    # The evaluator is most of the analyzer's code: a scan answered from its snapshot never imports it.
    from model_debugging.skips.incremental.evaluate_again import scan_again

    return scan_again(
        scope,
        cache,
        checkout,
        (snapshot, *changes) if snapshot is not None else None,
        test_method_name=test_method_name,
        progress=progress,
        stats=stats,
    )


def _changes(
    scope: ScanScope, snapshot: ScanSnapshot | None, checkout: Checkout
) -> tuple[set[str], set[str]]:
    """The test files and the library files changed since ``snapshot`` (none without one)."""
    if snapshot is None:
        return set(), set()
    return (
        changed_test_files(scope.repo, snapshot, checkout),
        changed_library_files(scope.repo, snapshot, checkout),
    )


def _as_kept(snapshot: ScanSnapshot, stats: ScanStats, progress: ScanProgress | None) -> ScanResult:
    stats.answer = "snapshot"
    if progress is not None:
        progress.line("no scanned file changed since a scan of the same files: its result stands")
    return snapshot.result
