"""What a rescan must evaluate again after test files changed, and the result and errors it folds.

Each model's evaluation recorded the test modules it looked up, found or not: its own files, the
files they import, directly or not (another model's tester, the common testers). Every test file is
parsed again (from the cache, but for the edited ones), which gives the files a full scan would hold
and their parse errors; a model is evaluated again when one of its lookups now finds another file or
a changed one (content or package depth), when a file of its folder came or went, or when it is new.
"""

from __future__ import annotations

from collections.abc import Mapping

from model_debugging.skips.decide.scan import parse_with_imports
from model_debugging.skips.decide.scope import ScanScope
from model_debugging.skips.incremental.memory import ModelEntry, ScanMemory
from model_debugging.skips.parse.record_store import RecordStore
from model_debugging.skips.records.test_file_index import TestFileIndex
from model_debugging.skips.records.test_files import ParseError
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.results.summary import TestSummary
from model_debugging.skips.source.modules import module_name
from model_debugging.skips.work.progress import ScanProgress, phase_of


def parse_test_files(
    store: RecordStore, scope: ScanScope, progress: ScanProgress | None
) -> tuple[TestFileIndex, tuple[ParseError, ...]]:
    """Parse every test file of ``scope`` and those they import into ``store``, as a full scan does;
    the files it then holds and their parse errors."""
    keys: dict[str, str] = {}
    paths = sorted(set(scope.common_paths + scope.model_files))
    with phase_of(progress, "parsing test files", "file") as phase:
        imported = parse_with_imports(store, scope.repo, paths, phase=phase, keys=keys)
    store.pin(scope.common_paths)
    store.pin(sorted(filter(None, map(store.path_of_module, imported))))
    return store.file_index(keys), store.errors()


def models_whose_tests_changed(
    memory: ScanMemory, now: TestFileIndex, model_paths: Mapping[str, list[str]]
) -> set[str]:
    """The models of ``model_paths`` that are new, or whose files or lookups changed since ``memory``."""
    kept = dict(memory.models)
    changed = set()
    for model, paths in model_paths.items():
        entry = kept.get(model)
        if (
            entry is None
            or not entry.modules.issuperset(map(module_name, paths))
            or memory.test_files.differs(now, entry.modules)
        ):
            changed.add(model)
    return changed


def folded(previous: ScanResult, tests: tuple[str, ...], entries: Mapping[str, ModelEntry]) -> ScanResult:
    """Every test of ``tests`` folded again from the outcomes of ``entries`` (models came or went)."""
    found = {}
    for index, name in enumerate(tests):
        summary = TestSummary(previous.tests[name].origin)
        for model, entry in entries.items():
            summary.add(model, entry.outcomes[index])
        found[name] = summary.result()
    return ScanResult(found, previous.errors)


def collection_errors(
    parse_errors: tuple[ParseError, ...], entries: Mapping[str, ModelEntry]
) -> tuple[ParseError, ...]:
    """The errors of a full scan: the files' parse errors, then each model's collection errors met
    in the files its files import (those replace a parse error of the same file), sorted by path."""
    found = {error.path: error for error in parse_errors}
    for entry in entries.values():
        found.update((error.path, error) for error in entry.errors)
    return tuple(found[path] for path in sorted(found))
