"""Evaluate again only the models a library change concerns, on a library of the files they read.

The kept memory says what each model's evaluation read (``memory.py``); ``plan.py`` says which
models a change concerns and which library files they need. If the new evaluation reads beyond
those files, it runs again on the whole library.
"""

from __future__ import annotations

import dataclasses

from model_debugging.skips.decide.per_model import evaluate_models
from model_debugging.skips.decide.runtime_checks import runtime_checks
from model_debugging.skips.decide.scan import common_tests, parse_with_imports
from model_debugging.skips.decide.scope import ScanScope
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
from model_debugging.skips.resolve.library_reads import Reads
from model_debugging.skips.source.checkout import models_of
from model_debugging.skips.work.entries import ParseCache
from model_debugging.skips.work.progress import ScanProgress, phase_of


def rescan(
    scope: ScanScope,
    cache: ParseCache,
    snapshot: ScanSnapshot,
    checkout: Checkout,
    changed: set[str],
    stats: ScanStats,
    progress: ScanProgress | None,
) -> tuple[ScanSnapshot, ScanMemory, str | None] | None:
    """The snapshot with the models a library change concerns evaluated again, its new memory and
    where the memory's outcomes are kept (None: with the memory); None when the memory to do so is
    gone (the caller then scans in full)."""
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
    result, outcomes_key, shared = snapshot.result, memory.outcomes_key, memory.shared
    if dirty:
        memory = with_outcomes(cache, memory)
        if memory is None:
            return None
        outcomes_key = None
        model_paths = {
            model: paths for model, paths in models_of(scope.model_files).items() if model in dirty
        }
        store = RecordStore(scope.repo, cache, elide=scope.model_files, jobs=scope.jobs, pytest=scope.pytest)
        wanted = sorted({*scope.common_paths, *(path for paths in model_paths.values() for path in paths)})
        parse_with_imports(store, scope.repo, wanted)
        store.pin(scope.common_paths)
        tests = common_tests(
            {path: store.get(path) for path in scope.common_paths if path in store}, scope.settings
        )
        if tuple(tests) != memory.tests:
            return None
        library, loaded = records.library(files_to_load(memory, dirty, changed, index))
        stats.library_files_loaded = len(loaded)
        runtime = runtime_checks(scope.repo, library, scope.common_paths, cache)
        with phase_of(
            progress, f"evaluating the models {len(changed)} changed library file(s) concern", "model"
        ) as phase:
            phase.add(len(model_paths))
            evaluated = []
            for found in evaluate_models(store, runtime, model_paths, tests, jobs=scope.jobs):
                evaluated.append(found)
                phase.advance()
        reads = [Reads.of(runtime.shared_reads), *(reads for _, _, reads in evaluated)]
        reads += [fact for read in reads for _, fact in read.fact_reads]
        if not all(
            read.within(loaded, checkout.library_keys, index) for read in reads
        ):  # it read beyond the files it read before: the whole library
            whole, _ = read_library(scope.repo, cache, jobs=scope.jobs)
            stats.library_files_loaded = len(checkout.library_keys)
            runtime = runtime_checks(scope.repo, Library(whole or (), scope.repo), scope.common_paths, cache)
            with phase_of(progress, "evaluating them again on the whole library", "model") as phase:
                phase.add(len(model_paths))
                evaluated = []
                for found in evaluate_models(store, runtime, model_paths, tests, jobs=scope.jobs):
                    evaluated.append(found)
                    phase.advance()
        shared = Reads.of(runtime.shared_reads)
        stats.answer, stats.models_evaluated = "rescan", len(evaluated)
        entries = dict(memory.models)
        for model, outcomes, reads in evaluated:
            entries[model] = ModelEntry(outcomes, reads)
        result = refolded(snapshot.result, memory, entries)
        models = entries.items()
    else:
        models = memory.models
    stats.answer = "rescan"
    memory = ScanMemory.of(memory.tests, models, shared, index, record_keys, {**memory.facts, **facts})
    return dataclasses.replace(snapshot, result=result.encoded()), memory, outcomes_key
