"""The run-time checks of one scan: the library read once, facts built once per test class."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from model_debugging.skips.decide.common_definitions import (
    CommonDefinitions,
    override_to_evaluate,
    read_common_definitions,
)
from model_debugging.skips.interp.outcome import RuntimeVerdict
from model_debugging.skips.interp.statements import evaluate_test
from model_debugging.skips.models.table import model_handlers
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.models.test_class.facts import class_facts
from model_debugging.skips.parse.library.load import read_library
from model_debugging.skips.resolve.classes import ClassRef, Resolver
from model_debugging.skips.resolve.collect import CollectedClass
from model_debugging.skips.resolve.library import Library
from model_debugging.skips.source.files import read_source
from model_debugging.skips.work.collector import collector_paused
from model_debugging.skips.work.entries import ParseCache, analyzer_version, cache_key
from model_debugging.skips.work.progress import Phase

# Decorator factories: written without a call (`@is_flaky`), they replace the test by the factory's
# inner decorator, which returns a function without running the body.
_FACTORIES = frozenset({"is_flaky"})
_MODEL_FILES = "/models/"  # test files of one model, as opposed to the common files and testers

NO_LIBRARY_NOTE = (
    "note: no library sources (src/<package>/models) in {repo}: skips decided at run time from the "
    "model and config classes are reported as undecided"
)


def body_never_runs(function: ast.FunctionDef) -> bool:
    """Whether a decorator factory written without its call (``@is_flaky``) replaces the test by the
    factory's inner decorator: called as the test, that returns a function, and the body never runs."""
    return any(
        isinstance(decorator, ast.Name) and decorator.id in _FACTORIES
        for decorator in function.decorator_list
    )


class RuntimeChecks:
    """Evaluates the common tests' run-time skips against the library for each collected class."""

    def __init__(self, repo: Path, library: Library, definitions: CommonDefinitions):
        self.repo, self.library, self.definitions = repo, library, definitions
        self.definitions_key: str | None = None  # where runtime_checks keeps the definitions
        self._facts: dict[ClassRef, TestClassFacts] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._resolver: Resolver | None = None

    def verdict(
        self,
        resolver: Resolver,
        test_class: CollectedClass,
        test_name: str,
        overridden: frozenset[int] = frozenset(),
    ) -> RuntimeVerdict | None:
        """What the definition of ``test_name`` the class runs does for it: the common one, or the
        class's own override in a model's test file when it is shaped like a common test (see
        ``override_to_evaluate``: a skip in its loop over the model classes is then decided or
        undecided, never taken as ran); None when it cannot skip. A common ``parameterized.expand``
        test undecided on its unknown arguments is run again with each case's (but the
        ``overridden`` ones, which run their own definitions): it ran when one case runs."""
        found = test_class.definitions.get(test_name)
        if found is None:
            return None
        key = (resolver.path_of(found[0]) or "", found[0].name, test_name)
        function = self.definitions.get(*key)
        facts = None
        if function is None:
            facts = self._class_facts(resolver, test_class)
            function = facts.definition(test_name)
            if function is None or not override_to_evaluate(function, self.definitions.may_skip):
                return None
        elif test_name not in self.definitions.may_skip:
            return None
        if body_never_runs(function):
            return RuntimeVerdict("ran")  # the test passes
        facts = facts or self._class_facts(resolver, test_class)
        verdict = evaluate_test(facts, function, self.definitions.may_skip)
        cases = self.definitions.case_arguments.get(key)
        if verdict.status != "undecided" or not cases:
            return verdict
        distinct = dict.fromkeys(case for index, case in enumerate(cases) if index not in overridden)
        verdicts = (evaluate_test(facts, function, self.definitions.may_skip, case) for case in distinct)
        return _any_case_runs(verdicts, verdict)

    def runs(
        self, resolver: Resolver, test_class: CollectedClass, test_name: str
    ) -> tuple[ast.FunctionDef, TestClassFacts] | None:
        """The definition of ``test_name`` the class runs (a common file's, or its override in a
        model's test file) and the facts of the class, for evaluating it otherwise; None when the
        definition cannot be read."""
        found = test_class.definitions.get(test_name)
        if found is None:
            return None
        facts = self._class_facts(resolver, test_class)
        function = self.definitions.get(resolver.path_of(found[0]) or "", found[0].name, test_name)
        function = function or facts.definition(test_name)
        return (function, facts) if function is not None else None

    def first_model_class(self, resolver: Resolver, test_class: CollectedClass) -> str | None:
        """The name of the first class of ``all_model_classes`` resolved in the library (a tester
        may list them by naming convention), None when it could not be resolved."""
        classes = self._class_facts(resolver, test_class).model_classes
        return classes[0].name if classes else None

    def case_names(self, resolver: Resolver, owner: ClassRef, test_name: str) -> tuple[str, ...] | None:
        """The case names of a ``parameterized.expand`` test of the common files, from its computed
        parameters (None for another definition, or parameters not computed from literals)."""
        return self.definitions.case_names(resolver.path_of(owner), owner.name, test_name)

    def _test_file(self, path: str) -> ast.Module | None:
        """A test file read with ``ast`` (testers' ``get_config``), kept while its model is analyzed."""
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(read_source(self.repo / path))
            except (OSError, SyntaxError, ValueError):
                self._trees[path] = None
        return self._trees[path]

    def _class_facts(self, resolver: Resolver, test_class: CollectedClass) -> TestClassFacts:
        if resolver is not self._resolver:  # a new model: the facts of the previous one are done with
            self._facts.clear()
            # so are its own test files; the shared ones (a common file is ~300 kB) serve every model
            self._trees = {path: tree for path, tree in self._trees.items() if _MODEL_FILES not in path}
            self._resolver = resolver
        facts = self._facts.get(test_class.ref)
        if facts is None:

            def definition(name: str):
                found = test_class.definitions.get(name)
                if found is None:
                    return None
                return self.definitions.get(resolver.path_of(found[0]), found[0].name, name)

            facts = class_facts(
                resolver,
                test_class.ref.name,
                test_class.linearization,
                self.library,
                definition,
                self._test_file,
            )
            facts = replace(
                facts, module_function=self.definitions.module_functions.get, handlers=model_handlers()
            )
            self._facts[test_class.ref] = facts
        return facts


def _any_case_runs(verdicts: Iterable[RuntimeVerdict], unknown: RuntimeVerdict) -> RuntimeVerdict:
    """The cases' verdicts as the pair's, taken in order until one runs: ran when one ran, skipped
    when all did, else the first undecided (``unknown``, the verdict without the arguments, when
    there is no case)."""
    seen = []
    for verdict in verdicts:
        if verdict.status == "ran":
            return verdict
        seen.append(verdict)
    undecided = [verdict for verdict in seen if verdict.status == "undecided"]
    return (undecided or seen or [unknown])[0]


def load_runtime_checks(
    repo: Path,
    common_paths: list[str],
    cache: ParseCache | None,
    *,
    jobs: int | None,
    keys: dict[str, str],
    record_keys: dict[str, str] | None = None,
    phase: Phase | None = None,
    reads_library: Callable[[CommonDefinitions], bool] | None = None,
) -> RuntimeChecks:
    """Read the library (cached per file) and the common files; says once on stderr when there is no
    library. ``keys``, ``record_keys`` and ``phase`` go to :func:`read_library`. When
    ``reads_library`` says, from the common files' definitions, that no verdict asked for can read
    the library, it is not read (the checks hold an empty one)."""
    definitions, key = _common_definitions(repo, common_paths, cache)
    if reads_library is not None and not reads_library(definitions):
        return _checks(repo, Library(()), definitions, key)
    records, errors = read_library(repo, cache, jobs=jobs, keys=keys, record_keys=record_keys, phase=phase)
    if records is None:
        print(NO_LIBRARY_NOTE.format(repo=repo), file=sys.stderr)
    with collector_paused():  # the index built from the records lives on
        library = Library(records or (), repo if records is not None else None)
    for error in errors:
        print(error, file=sys.stderr)
    return _checks(repo, library, definitions, key)


def runtime_checks(
    repo: Path, library: Library, common_paths: list[str], cache: ParseCache | None
) -> RuntimeChecks:
    """The checks against a library already read."""
    return _checks(repo, library, *_common_definitions(repo, common_paths, cache))


def _common_definitions(
    repo: Path, common_paths: list[str], cache: ParseCache | None
) -> tuple[CommonDefinitions, str]:
    """The common files' definitions and their cache key: kept in ``cache`` by their content (read
    with ``ast``, they cost a second or more)."""
    sources = {}
    for path in common_paths:
        try:
            sources[path] = read_source(repo / path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    key = cache_key("common definitions", repr((analyzer_version(), sorted(sources.items()))).encode())
    definitions = cache.get_entry(key, CommonDefinitions) if cache is not None else None
    if definitions is None:
        definitions = read_common_definitions(sources)
        if cache is not None:  # stored before any evaluation leaves its notes on the nodes
            cache.put_entry(key, definitions)
    return definitions, key


def _checks(repo: Path, library: Library, definitions: CommonDefinitions, key: str) -> RuntimeChecks:
    checks = RuntimeChecks(repo, library, definitions)
    checks.definitions_key = key
    return checks
