"""Find, statically, the (model, test) pairs a test passes without checking anything.

For each pair the scan says ran, every test class of the model that runs the test is evaluated
again with its assertions marked (a class undecided on whether it runs it makes the pair not inert) (see :mod:`~model_debugging.skips.inert.marking`): the pair is
inert when each of them can reach the end of the test without reaching an assertion, on what the
library's sources say (a loop that ``continue``s past every model class, an early ``return``, a
flag never set), or runs a definition whose body never runs (``@is_flaky`` without its call). A class whose answer depends on what only the run knows makes the pair not inert
here (a run with our pytest plugin can tell). Not evaluated: ``parameterized.expand`` tests (their
cases' arguments), and tests with no assertion at all (smoke tests).

It evaluates every model again, so it costs about as much as a scan without its cache.
"""

from __future__ import annotations

import ast
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from model_debugging.skips.decide.per_model import model_resolver
from model_debugging.skips.decide.runtime_checks import RuntimeChecks, body_never_runs, load_runtime_checks
from model_debugging.skips.decide.scan import parse_with_imports
from model_debugging.skips.decide.scope import common_tests
from model_debugging.skips.decide.verdicts import class_outcome
from model_debugging.skips.inert.marking import HelperChecks, mark_assertions, self_calls, surely_checks
from model_debugging.skips.interp.statements import evaluate_test
from model_debugging.skips.parse.record_store import RecordStore
from model_debugging.skips.records.outcome import Status
from model_debugging.skips.resolve.classes import Resolver
from model_debugging.skips.resolve.collect import CollectedClass, collect_test_classes
from model_debugging.skips.results.scan_result import TestResult
from model_debugging.skips.source.checkout import checkout_pytest_settings, find_model_test_files, models_of
from model_debugging.skips.source.settings import DEFAULT_SETTINGS, ScanSettings
from model_debugging.skips.work.entries import ParseCache, ScratchCache, default_cache_dir


def find_static_inert(
    repo: str | os.PathLike,
    tests: Mapping[str, TestResult],
    *,
    config: ScanSettings | None = None,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
    jobs: int | None = None,
    on_model: Callable[[str], None] | None = None,
) -> dict[str, tuple[str, ...]]:
    """test -> the models (sorted) whose pairs ``tests`` (a scan's) calls ran and that are inert."""
    repo = Path(repo)
    settings = config or DEFAULT_SETTINGS
    ran = {name: frozenset(result.models_ran) for name, result in tests.items()}
    pytest = checkout_pytest_settings(repo)
    model_files = find_model_test_files(repo, settings, pytest)
    common_paths = [common.path for common in settings.common_test_files if (repo / common.path).is_file()]
    found: dict[str, list[str]] = {name: [] for name in tests}
    with tempfile.TemporaryDirectory(prefix="model-debugging-inert-") as scratch:
        cache = ParseCache(cache_dir or default_cache_dir()) if use_cache else ScratchCache(scratch)
        store = RecordStore(repo, cache, elide=model_files, jobs=jobs, pytest=pytest)
        imported = parse_with_imports(store, repo, sorted(set(common_paths + model_files)))
        store.pin(common_paths)
        store.pin(sorted(filter(None, map(store.path_of_module, imported))))
        defined = common_tests({path: store.get(path) for path in common_paths if path in store}, settings)
        runtime = load_runtime_checks(repo, common_paths, cache, jobs=jobs, keys={})
        marked = _MarkedDefinitions()
        for model, paths in models_of(model_files).items():
            wanted = {name: defined[name] for name in tests if name in defined and model in ran[name]}
            if not wanted:
                continue
            if on_model is not None:
                on_model(model)
            resolver = model_resolver(store, paths)
            classes = collect_test_classes(resolver, runtime.library, paths, wanted, pytest)
            for name in wanted:
                statuses = [
                    (test_class, class_outcome(resolver, test_class, name, runtime).status)
                    for test_class in classes
                    if name in test_class.applicable
                ]
                if any(status is Status.UNDECIDED for _, status in statuses):  # it may run it, and check
                    continue
                running = [test_class for test_class, status in statuses if status is Status.RAN]
                if running and all(
                    _inert(resolver, test_class, name, runtime, marked) for test_class in running
                ):
                    found[name].append(model)
    return {name: tuple(sorted(models)) for name, models in found.items() if models}


class _MarkedDefinitions:
    """Marked copies of definitions, shared by the classes whose helpers check the same things."""

    def __init__(self) -> None:
        self._copies: dict[tuple[ast.FunctionDef, frozenset[str]], ast.FunctionDef | None] = {}

    def get(self, function: ast.FunctionDef, helper_checks: HelperChecks) -> ast.FunctionDef | None:
        checking = frozenset(name for name in self_calls(function) if helper_checks(name))
        key = (function, checking)  # a syntax node hashes by identity
        if key not in self._copies:
            self._copies[key] = mark_assertions(function, helper_checks)
        return self._copies[key]


def _inert(
    resolver: Resolver,
    test_class: CollectedClass,
    name: str,
    runtime: RuntimeChecks,
    marked: _MarkedDefinitions,
) -> bool:
    if name in test_class.expanded:
        return False
    runs = runtime.runs(resolver, test_class, name)
    if runs is None:
        return False
    function, facts = runs
    if body_never_runs(function):
        return True  # pytest passes it without running a line of it
    copy = marked.get(function, HelperChecks(facts.definition))
    if copy is None or surely_checks(copy):
        return False
    verdict = evaluate_test(facts, copy, runtime.definitions.may_skip)
    return verdict.status == "ran" and not verdict.raised
