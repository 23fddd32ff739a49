"""Decide every common test for each model of a scan: one model at a time, or in forked processes.

Evaluating the run-time skips costs most of a cold scan, and models are independent: with
``jobs`` > 1 (and ``fork`` available) the models are shared out in batches to processes forked
from the scan, which inherit its records, library and common definitions instead of receiving
them. Each batch sends back its models' outcomes, what they read in the library, and the parse
errors met on the way (files some model needed parsed in full), in model order. The first batch
runs in the scan's own process: the notes the evaluator leaves on the common definitions (what each
statement can do) are then made once, inherited by every worker, and kept in the cache.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from model_debugging.skips.decide.runtime_checks import RuntimeChecks
from model_debugging.skips.decide.verdicts import collect_test_classes, model_outcome
from model_debugging.skips.parse.import_lines import import_line
from model_debugging.skips.parse.record_store import RecordStore
from model_debugging.skips.records.outcome import Outcome
from model_debugging.skips.records.test_files import CANNOT_IMPORT, ParseError
from model_debugging.skips.resolve.classes import ClassRef, Resolver
from model_debugging.skips.resolve.collect import FailedImport, ImportWalks, failed_imports
from model_debugging.skips.resolve.library_reads import Reads
from model_debugging.skips.source.files import read_source
from model_debugging.skips.source.modules import module_name
from model_debugging.skips.work.collector import collector_paused
from model_debugging.skips.work.pool import worker_pool

# Below this many models, starting processes costs more than it saves; models per task.
_PARALLEL_THRESHOLD = 16
_BATCH = 8


class ModelVerdicts(NamedTuple):
    """One model's outcome of every test, what its evaluation read in the library, the test modules
    it looked up (found or not: a later scan evaluates it again when one of them changed) and the
    collection errors of its files met in the files they import."""

    model: str
    outcomes: tuple[Outcome, ...]
    reads: Reads
    modules: frozenset[str]
    errors: tuple[ParseError, ...]


# What forked workers inherit from the scan that starts them: (store, run-time checks, tests).
_INHERITED: tuple[RecordStore, RuntimeChecks, Mapping[str, Any]] | None = None


def evaluate_models(
    store: RecordStore,
    runtime: RuntimeChecks,
    model_paths: Mapping[str, list[str]],
    tests: Mapping[str, Any],
    *,
    jobs: int | None = None,
) -> Iterator[ModelVerdicts]:
    """Per model, in order: its outcome of every test in ``tests`` (in order) and what it read in the library."""
    items = list(model_paths.items())
    jobs = jobs or multiprocessing.cpu_count()
    with _spared_by_the_collector():
        if (
            jobs < 2
            or len(items) < _PARALLEL_THRESHOLD
            or "fork" not in multiprocessing.get_all_start_methods()
        ):
            yield from _evaluate(store, runtime, items, tests)
            return
        global _INHERITED
        _INHERITED = (store, runtime, tests)
        batches = [items[start : start + _BATCH] for start in range(0, len(items), _BATCH)]
        yield from _evaluate(store, runtime, batches[0], tests)
        try:
            context = multiprocessing.get_context("fork")
            with worker_pool(jobs, context) as executor:
                for verdicts, errors in executor.map(_evaluate_batch, batches[1:]):
                    store.keep_errors(errors)
                    yield from verdicts
        finally:
            _INHERITED = None


@contextlib.contextmanager
def _spared_by_the_collector() -> Iterator[None]:
    """What is in memory when the evaluation starts (records, library, common definitions: millions
    of objects) lives until it ends: the garbage collector stops walking it at each full collection
    (with the collections during each model, a third of a rescan's CPU time). Forked workers inherit
    the frozen objects, so their collections skip them too (and leave their pages shared)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _evaluate_batch(batch: list[tuple[str, list[str]]]) -> tuple[list[ModelVerdicts], tuple[ParseError, ...]]:
    store, runtime, tests = _INHERITED
    return list(_evaluate(store, runtime, batch, tests)), store.errors()


def _evaluate(
    store: RecordStore, runtime: RuntimeChecks, items: list[tuple[str, list[str]]], tests: Mapping[str, Any]
) -> Iterator[ModelVerdicts]:
    for model, paths_of_model in items:
        with collector_paused():  # one collection after the model rather than hundreds during it
            asked: set[str] = set()
            with runtime.library.recording() as reads:
                resolver = model_resolver(store, paths_of_model, asked)
                walks: ImportWalks = {}  # each file's imports walked once for both
                classes = collect_test_classes(
                    resolver, runtime.library, paths_of_model, tests, store.pytest, walks
                )
                failed = failed_imports(resolver, runtime.library, paths_of_model, walks)
                errors = tuple(_import_error(runtime.repo, failure) for failure in failed)
                store.keep_errors(errors)
                outcomes = tuple(model_outcome(resolver, classes, name, runtime) for name in tests)
            _set_aside_survivors()
        yield ModelVerdicts(model, outcomes, Reads.of(reads), frozenset(asked), errors)


def _import_error(repo: Path, failed: FailedImport) -> ParseError:
    """The collection error pytest reports for a file whose import fails in a file it imports, or
    at its own import (the module or name it names is missing)."""
    if failed.cause.path == failed.path:
        return failed.cause
    line = failed.line
    try:
        line = line or import_line(read_source(repo / failed.path), failed.path, failed.imported)
    except OSError:
        line = 1
    cause = failed.cause.message.removeprefix(CANNOT_IMPORT)
    where = f"{failed.cause.path}, line {failed.cause.line}"
    message = f"{CANNOT_IMPORT}importing {failed.imported} fails: {where}: {cause}"
    return ParseError(failed.path, line, message, failed.cause)


def _set_aside_survivors() -> None:
    """Collect the cycles a model left, then take what survives out of later collections.

    What outlives a model is the library's memo (facts, and the syntax trees of the files they were
    read from: millions of objects) and its outcomes, all kept to the end of the evaluation. Left in
    the collector's generations, every full collection walked them again (a tenth of the
    evaluation's time, most of it in three collections)."""
    gc.collect(1)
    gc.freeze()


def model_resolver(store: RecordStore, model_files: list[str], asked: set[str] | None = None) -> Resolver:
    """A resolver for one model's files; elided classes they inherit are parsed in full first. The
    modules it looks up go to ``asked``."""
    resolver = Resolver(store.view(asked))
    needed = _inheriting_elided(resolver, model_files)
    if not needed:
        return resolver
    store.parse_in_full(needed)
    return Resolver(store.view(asked))


def _inheriting_elided(resolver: Resolver, model_files: list[str]) -> set[str]:
    """Files with an elided class that a class of ``model_files`` inherits: they must be parsed in full."""
    needed = set()
    for path in model_files:
        for info in resolver.modules[module_name(path)].classes:
            for base in resolver.mro(ClassRef(module_name(path), info.name))[1:]:
                base_info = resolver.info(base)
                if base_info is not None and base_info.elided:
                    needed.add(resolver.path_of(base))
    return needed
