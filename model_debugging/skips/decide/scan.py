"""A scan from the checkout's files alone: parse, read the library, decide every (model, test) pair.

Nothing here knows of earlier scans: ``skips/incremental/`` wraps :func:`scan` to answer from what
an earlier scan kept, and keeps what this one read. The records of parsed files go to an entry store
(the cache, or a scratch folder for one scan): only the shared ones stay in memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_debugging.skips.decide.common_definitions import CommonDefinitions
from model_debugging.skips.decide.per_model import evaluate_models
from model_debugging.skips.decide.runtime_checks import load_runtime_checks
from model_debugging.skips.decide.scope import FullScan, ScanScope, common_tests
from model_debugging.skips.parse.record_store import RecordStore
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.results.summary import TestSummary
from model_debugging.skips.source.checkout import models_of, module_path
from model_debugging.skips.source.files import read_source
from model_debugging.skips.source.scanned_paths import TESTS_FOLDER
from model_debugging.skips.work.entries import ParseCache
from model_debugging.skips.work.progress import ScanProgress, phase_of

# Imports are followed into files under these top-level folders only (never into src/).
FOLLOW_IMPORTS_UNDER = (TESTS_FOLDER,)


def scan(
    scope: ScanScope,
    entries: ParseCache,
    *,
    test_method_name: str | None = None,
    progress: ScanProgress | None = None,
    keep_models: bool = False,
) -> FullScan:
    """Decide every common test (or only ``test_method_name``) for every model of ``scope``.

    Records are written to and read back from ``entries``; ``keep_models`` keeps each model's
    outcomes and reads in the answer. ``test_method_name`` is a test of the common files: the caller
    (``scan_repository``) checks it before any scan (``scope.check_test_name``)."""
    keys: dict[str, str] = {}
    record_keys: dict[str, str] = {}
    paths = sorted(set(scope.common_paths + scope.model_files))
    store = RecordStore(
        scope.repo,
        entries,
        elide=scope.model_files,
        test=test_method_name,
        jobs=scope.jobs,
        pytest=scope.pytest,
    )
    with phase_of(progress, "parsing test files", "file") as phase:
        imported = parse_with_imports(store, scope.repo, paths, phase=phase, keys=keys)
        store.parse_named_tests_again()
    # Records that other files import stay in memory; the others are read again for their model.
    store.pin(scope.common_paths)
    store.pin(sorted(filter(None, map(store.path_of_module, imported))))
    test_files = store.file_index(keys)
    tests = _common_tests_of(store, scope)
    if test_method_name is not None:
        tests = {test_method_name: tests[test_method_name]}
    with phase_of(progress, "reading the library", "file") as phase:
        runtime = load_runtime_checks(
            scope.repo,
            scope.common_paths,
            entries,
            jobs=scope.jobs,
            keys=keys,
            record_keys=record_keys,
            phase=phase,
            reads_library=(
                None if test_method_name is None else _library_read(store.paths(), scope, test_method_name)
            ),
        )
    # One model at a time: its records, resolved classes and outcomes go once folded into the summaries.
    summaries = {name: TestSummary(origin) for name, (origin, _) in tests.items()}
    kept, evaluated = [], 0
    by_model = models_of(scope.model_files)
    with phase_of(progress, "evaluating models", "model") as phase:
        phase.add(len(by_model))
        for verdicts in evaluate_models(store, runtime, by_model, tests, jobs=scope.jobs):
            for summary, outcome in zip(summaries.values(), verdicts.outcomes, strict=True):
                summary.add(verdicts.model, outcome)
            phase.advance()
            evaluated += 1
            if keep_models:
                kept.append(verdicts)
    result = ScanResult({name: summaries.pop(name).result() for name in tests}, store.errors())
    return FullScan(result, runtime, test_files, evaluated, kept, record_keys)


def _common_tests_of(store: RecordStore, scope: ScanScope) -> dict[str, tuple[str, frozenset]]:
    return common_tests(
        {path: store.get(path) for path in scope.common_paths if path in store}, scope.settings
    )


def _library_read(paths: list[str], scope: ScanScope, test: str) -> Callable[[CommonDefinitions], bool]:
    """Whether a verdict on ``test`` may read the library, from the common files' definitions: when
    its common definition may skip at run time, or when another definition of it may be evaluated:
    one the common definitions do not hold, or any use of its name in the other files read (``paths``)."""
    name = re.compile(rb"\b%s\b" % re.escape(test.encode()))
    definition = re.compile(rb"\bdef[ \t]+%s\b" % re.escape(test.encode()))
    try:
        texts = {path: read_source(scope.repo / path) for path in paths}
    except OSError:
        return lambda definitions: True
    common = set(scope.common_paths)
    written = any(name.search(text) for path, text in texts.items() if path not in common)
    defined = sum(len(definition.findall(text)) for path, text in texts.items() if path in common)

    def reads(definitions: CommonDefinitions) -> bool:
        held = sum(1 for _, _, method in definitions.functions if method == test)
        return written or defined > held or test in definitions.may_skip

    return reads


def parse_with_imports(store: RecordStore, repo: Path, paths: list[str], **options: Any) -> set[str]:
    """Parse ``paths`` and, transitively, the repository files they import from.

    Returns the names of the modules (under the followed folders) that some parsed file imports.
    """
    imported = new = store.parse(paths, FOLLOW_IMPORTS_UNDER, **options)
    looked_up: set[str] = set()
    while new:
        wanted = set()
        for module in new - looked_up:
            looked_up.add(module)
            if store.path_of_module(module) is None:
                path = module_path(repo, module)
                if path is not None and path not in store:
                    wanted.add(path)
        new = store.parse(sorted(wanted), FOLLOW_IMPORTS_UNDER, **options) if wanted else set()
        imported = imported | new
    return imported
