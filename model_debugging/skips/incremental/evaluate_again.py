"""A scan that the cache cannot answer as kept: the models a change of test or library files concerns
evaluated again (``rescan.py``) when a full scan's memory allows it, else a scan from the test files,
whose snapshot (and, for a full scan, memory) is kept for the next one.
"""

from __future__ import annotations

import dataclasses

from model_debugging.skips.decide.scan import scan
from model_debugging.skips.decide.scope import FullScan, ScanScope
from model_debugging.skips.incremental.memory import (
    Checkout,
    ModelEntry,
    ScanMemory,
    ScanStats,
    keep_memory,
    snapshot_library_keys,
)
from model_debugging.skips.incremental.rescan import rescan
from model_debugging.skips.incremental.snapshot import ScanSnapshot, put_snapshot, single_test_key
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.work.entries import ParseCache, cache_key
from model_debugging.skips.work.progress import ScanProgress


def scan_again(
    scope: ScanScope,
    cache: ParseCache,
    checkout: Checkout,
    changed_since: tuple[ScanSnapshot, set[str], set[str]] | None,
    *,
    test_method_name: str | None,
    progress: ScanProgress | None,
    stats: ScanStats,
) -> ScanResult:
    """The result for ``scope``: ``changed_since`` is a full scan's snapshot with the same settings
    and common test files, with the test files and the library files changed since (re-evaluated
    from its memory when it is kept), else None."""
    if changed_since is not None:
        snapshot, changed_tests, changed = changed_since
        again = rescan(scope, cache, snapshot, checkout, changed_tests, changed, stats, progress)
        if again is not None:
            _remember(cache, scope, checkout, *again)
            return again[0].result
    full = scan(scope, cache, test_method_name=test_method_name, progress=progress, keep_models=True)
    stats.models_evaluated = full.evaluated
    memory = _memory_of(full)
    if test_method_name is not None:
        key = single_test_key(checkout.lookup, test_method_name)
        _keep_snapshot(cache, scope, checkout, key, _snapshot_of(full), memory)
        return full.result
    _remember(cache, scope, checkout, _snapshot_of(full), memory)
    if full.runtime.definitions_key is not None:  # again, with the notes the evaluation left on their nodes
        cache.put_entry(full.runtime.definitions_key, full.runtime.definitions)
    return full.result


def _snapshot_of(full: FullScan) -> ScanSnapshot:
    return ScanSnapshot(full.test_files.keys(), None, full.result.encoded(), "")


def _memory_of(full: FullScan) -> ScanMemory:
    return ScanMemory.of(
        tuple(full.result.tests),
        tuple(
            (found.model, ModelEntry(found.outcomes, found.reads, found.modules, found.errors))
            for found in full.models
        ),
        full.runtime.library.defined_in(),
        full.record_keys,
        full.test_files,
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
    _keep_snapshot(cache, scope, checkout, checkout.lookup, snapshot, memory, memory_key)


def _keep_snapshot(
    cache: ParseCache,
    scope: ScanScope,
    checkout: Checkout,
    key: str,
    snapshot: ScanSnapshot,
    memory: ScanMemory,
    memory_key: str = "",
) -> None:
    """Keep ``snapshot`` under ``key``, with the keys of the library and of the other files its
    evaluation read (``memory``), and where its memory is kept ("": none is)."""
    library_keys = snapshot_library_keys(scope.repo, checkout, memory.all_reads())
    put_snapshot(cache, key, dataclasses.replace(snapshot, library_keys=library_keys, memory_key=memory_key))
