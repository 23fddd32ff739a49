"""A scan answered from the cache when it can be: the kept result as it is, or with only the models a
library change concerns evaluated again (``rescan.py``), else a full scan whose memory is kept.
"""

from __future__ import annotations

import dataclasses

from model_debugging.skips.decide.scope import FullScan, ScanScope
from model_debugging.skips.incremental.memory import (
    Checkout,
    ModelEntry,
    ScanMemory,
    ScanStats,
    changed_library_files,
    keep_memory,
    snapshot_library_keys,
    valid_snapshot,
)
from model_debugging.skips.incremental.snapshot import ScanSnapshot, get_snapshot, put_snapshot
from model_debugging.skips.resolve.library_reads import Reads
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.work.entries import ParseCache, cache_key
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
    a scan of the same test files is kept there (the whole result; a single test is picked by the
    caller). A full scan of every test keeps its snapshot and memory for the next one."""
    # The evaluator is most of the analyzer's code: a scan answered from its snapshot never imports it.
    from model_debugging.skips.decide.scan import scan
    from model_debugging.skips.incremental.rescan import rescan

    paths = sorted(set(scope.common_paths + scope.model_files))
    checkout = Checkout.read(scope.repo, paths, scope.settings, scope.pytest)
    snapshot = valid_snapshot(scope.repo, get_snapshot(cache, checkout.lookup), checkout)
    if snapshot is not None:
        changed = changed_library_files(scope.repo, snapshot, checkout)
        if not changed:
            stats.answer = "snapshot"
            if progress is not None:
                progress.line("no scanned file changed since a scan of the same files: its result stands")
            return snapshot.result
        result = rescan(scope, cache, snapshot, checkout, changed, stats, progress)
        if result is not None:
            _remember(cache, scope, checkout, *result)
            return result[0].result
    whole = test_method_name is None
    full = scan(scope, cache, test_method_name=test_method_name, progress=progress, keep_models=whole)
    stats.models_evaluated = full.evaluated
    if whole:
        _remember(cache, scope, checkout, _snapshot_of(full, checkout), _memory_of(full))
        if (
            full.runtime.definitions_key is not None
        ):  # again, with the notes the evaluation left on their nodes
            cache.put_entry(full.runtime.definitions_key, full.runtime.definitions)
    return full.result


def _snapshot_of(full: FullScan, checkout: Checkout) -> ScanSnapshot:
    library_keys = checkout.library_keys or {}
    test_keys = tuple(sorted(item for item in full.keys.items() if item[0] not in library_keys))
    return ScanSnapshot(test_keys, None, full.result, "")


def _memory_of(full: FullScan) -> ScanMemory:
    return ScanMemory.of(
        tuple(full.result.tests),
        tuple((model, ModelEntry(outcomes, reads)) for model, outcomes, reads in full.models),
        Reads.of(full.runtime.shared_reads),
        full.runtime.library.defined_in(),
        full.record_keys,
    )


def _remember(
    cache: ParseCache,
    scope: ScanScope,
    checkout: Checkout,
    snapshot: ScanSnapshot,
    memory: ScanMemory,
    outcomes_key: str | None = None,
) -> None:
    """Keep the snapshot (with the library's keys), and the memory a later rescan re-evaluates from
    (``outcomes_key``: its outcomes are the ones kept there)."""
    memory_key = cache_key("memory", checkout.lookup.encode())
    keep_memory(cache, memory_key, memory, outcomes_key)
    library_keys = snapshot_library_keys(scope.repo, checkout, memory.all_reads())
    put_snapshot(
        cache,
        checkout.lookup,
        dataclasses.replace(snapshot, library_keys=library_keys, memory_key=memory_key),
    )
