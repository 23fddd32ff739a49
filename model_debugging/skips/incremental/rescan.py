"""Evaluate again only the models a change concerns, on a library of the files they read.

The kept memory says what each model's evaluation read (``memory.py``): after test files changed,
``changed_tests.py`` says which models looked up a changed one (or are new); after library files
changed, ``plan.py`` says which models read the change. Both kinds of change are handled in one
rescan. The models evaluated again run on a library of the files they read before and the changed
ones (the whole library when one of them is new); if the new evaluation reads beyond those files, it
runs again on the whole library. The other models keep their outcomes and collection errors; a
removed model's are dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from model_debugging.skips.decide.per_model import ModelVerdicts, evaluate_models
from model_debugging.skips.decide.runtime_checks import RuntimeChecks, runtime_checks
from model_debugging.skips.decide.scan import parse_with_imports
from model_debugging.skips.decide.scope import ScanScope, common_tests
from model_debugging.skips.incremental.changed_tests import (
    collection_errors,
    folded,
    models_whose_tests_changed,
    parse_test_files,
)
from model_debugging.skips.incremental.memory import (
    Checkout,
    ModelEntry,
    ScanMemory,
    ScanStats,
    library_records,
    with_outcomes,
)
from model_debugging.skips.incremental.plan import (
    RecordsAt,
    causes_of,
    files_to_load,
    library_changes,
    models_to_evaluate,
    name_index,
    recomputed_facts,
    refolded,
)
from model_debugging.skips.incremental.snapshot import ScanSnapshot
from model_debugging.skips.parse.library.load import read_library
from model_debugging.skips.parse.record_store import RecordStore
from model_debugging.skips.resolve.library import Library
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.source.checkout import models_of
from model_debugging.skips.work.entries import ParseCache
from model_debugging.skips.work.progress import ScanProgress, phase_of


def rescan(
    scope: ScanScope,
    cache: ParseCache,
    snapshot: ScanSnapshot,
    checkout: Checkout,
    changed_tests: set[str],
    changed: set[str],
    stats: ScanStats,
    progress: ScanProgress | None,
) -> tuple[ScanSnapshot, ScanMemory, str | None] | None:
    """The snapshot with the models the changed test files and library files (``changed``) concern
    evaluated again, its new memory and where the memory's outcomes are kept (None: with the
    memory); None when the memory to do so is gone (the caller then scans in full)."""
    memory = cache.get_entry(snapshot.memory_key, ScanMemory)
    if memory is None or checkout.library_keys is None:
        return None
    order = list(checkout.library_keys)
    record_keys = {path: key for path, key in memory.record_keys.items() if path not in changed}
    new_records = library_records(scope.repo, cache, [path for path in order if path in changed], record_keys)
    index = name_index(memory, changed, new_records, order)
    records = RecordsAt(scope.repo, cache, order, dict(new_records))
    changes = library_changes(cache, memory, changed, new_records)
    changes, facts = recomputed_facts(memory, changes, records, index)
    dirty = models_to_evaluate(memory, changes)
    stats.library_causes = causes_of(memory, changes, dirty, facts, index)
    store = RecordStore(scope.repo, cache, elide=scope.model_files, jobs=scope.jobs, pytest=scope.pytest)
    model_paths = models_of(scope.model_files)
    test_files, parse_errors = memory.test_files, None
    if changed_tests:
        test_files, parse_errors = parse_test_files(store, scope, progress)
        dirty |= models_whose_tests_changed(memory, test_files, model_paths)
    stats.answer = "rescan"
    facts = {**memory.facts, **facts}
    test_keys = test_files.keys() if changed_tests else snapshot.test_keys
    if not dirty and list(model_paths) == [model for model, _ in memory.models]:
        result = snapshot.result
        if parse_errors is not None:
            result = ScanResult(result.tests, collection_errors(parse_errors, dict(memory.models)))
        outcomes_key = memory.outcomes_key
        memory = ScanMemory.of(memory.tests, memory.models, index, record_keys, test_files, facts)
        return (
            dataclasses.replace(snapshot, test_keys=test_keys, result=result.encoded()),
            memory,
            outcomes_key,
        )
    memory = with_outcomes(cache, memory)
    if memory is None:
        return None
    entries = dict(memory.models)
    if dirty:
        to_evaluate = {model: paths for model, paths in model_paths.items() if model in dirty}
        if not changed_tests:
            wanted = sorted(
                {*scope.common_paths, *(path for paths in to_evaluate.values() for path in paths)}
            )
            parse_with_imports(store, scope.repo, wanted)
            store.pin(scope.common_paths)
        tests = common_tests(
            {path: store.get(path) for path in scope.common_paths if path in store}, scope.settings
        )
        if tuple(tests) != memory.tests:
            return None
        evaluated, runtime = _evaluate(
            scope,
            cache,
            store,
            records,
            memory,
            to_evaluate,
            tests,
            changed,
            index,
            checkout,
            stats,
            progress,
        )
        stats.models_evaluated = len(evaluated)
        for found in evaluated:
            entries[found.model] = ModelEntry(found.outcomes, found.reads, found.modules, found.errors)
    entries = {model: entries[model] for model in model_paths}
    before = dict(memory.models)
    if parse_errors is None and any(
        model not in before or entry.errors != before[model].errors for model, entry in entries.items()
    ):  # a library change made a model's import fail, or work again: the errors are folded anew
        _, parse_errors = parse_test_files(store, scope, progress)
    if list(entries) == [model for model, _ in memory.models]:
        result = refolded(snapshot.result, memory, entries)
    else:
        result = folded(snapshot.result, memory.tests, entries)
    if parse_errors is not None:
        result = ScanResult(result.tests, collection_errors(parse_errors, entries))
    memory = ScanMemory.of(memory.tests, entries.items(), index, record_keys, test_files, facts)
    kept = dataclasses.replace(snapshot, test_keys=test_keys, result=result.encoded())
    return kept, memory, None


def _evaluate(
    scope: ScanScope,
    cache: ParseCache,
    store: RecordStore,
    records: RecordsAt,
    memory: ScanMemory,
    model_paths: Mapping[str, list[str]],
    tests: Mapping,
    changed: set[str],
    index: Mapping[str, tuple[str, ...]],
    checkout: Checkout,
    stats: ScanStats,
    progress: ScanProgress | None,
) -> tuple[list[ModelVerdicts], RuntimeChecks]:
    """The verdicts of the models of ``model_paths``, on a library of the files they read before
    and the ``changed`` ones, or on the whole library when one of them is new or reads beyond those."""
    library_keys = checkout.library_keys or {}
    kept = {model for model, _ in memory.models}
    if kept.issuperset(model_paths):
        library, loaded = records.library(files_to_load(memory, frozenset(model_paths), changed, index))
        stats.library_files_loaded = len(loaded)
        runtime = runtime_checks(scope.repo, library, scope.common_paths, cache)
        evaluated = _run(
            store,
            runtime,
            model_paths,
            tests,
            scope.jobs,
            progress,
            f"evaluating the {len(model_paths)} model(s) the change concerns",
        )
        reads = [found.reads for found in evaluated]
        reads += [fact for read in reads for _, fact in read.fact_reads]
        if all(read.within(loaded, library_keys, index) for read in reads):
            return evaluated, runtime
        title = "evaluating them again on the whole library"  # they read beyond the files they read before
    else:
        title = f"evaluating the {len(model_paths)} model(s) the change concerns (new ones among them)"
    whole, _ = read_library(scope.repo, cache, jobs=scope.jobs)
    stats.library_files_loaded = len(library_keys)
    runtime = runtime_checks(scope.repo, Library(whole or (), scope.repo), scope.common_paths, cache)
    return _run(store, runtime, model_paths, tests, scope.jobs, progress, title), runtime


def _run(
    store: RecordStore,
    runtime: RuntimeChecks,
    model_paths: Mapping[str, list[str]],
    tests: Mapping,
    jobs: int | None,
    progress: ScanProgress | None,
    title: str,
) -> list[ModelVerdicts]:
    with phase_of(progress, title, "model") as phase:
        phase.add(len(model_paths))
        evaluated = []
        for found in evaluate_models(store, runtime, model_paths, tests, jobs=jobs):
            evaluated.append(found)
            phase.advance()
    return evaluated
