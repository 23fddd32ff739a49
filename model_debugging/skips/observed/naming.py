"""Name each item of a report as the analyzer names pairs: (model, test class, common test, case).

The model is the folder of the item's test file under the models folder; the test is the common
test the item runs: its own name, or for a ``parameterized.expand`` case (``test_x_0_fp16``) or a
parametrized item (``test_x[fp16]``) the test it was made from, the case being the item's name. A
folded skip (no name, a line) is named from the checkout: the test defined at that line, and for a
line in a common file, the model the report covers. Items of other tests (a model's own, the
common files' own) are not pairs of the scan: they are left out without a word.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from model_debugging.skips.observed.records import Report, RunItem, RunOutcome
from model_debugging.skips.source.files import read_source
from model_debugging.skips.source.settings import ScanSettings

_CASE_NUMBER = re.compile(r"_\d+(?=_|$)")

# Why an item of a model test could not be named (the counts a report's warning gives).
UNKNOWN_MODEL = "models the scan does not have"
MISSING_FILE = "files the checkout does not have"
NO_TEST_AT_LINE = "skip locations at no test of the checkout"
SHARED_LOCATION = "skips in a shared file, in a report of several models"
COLLECTION_ERROR = "test files that could not be collected"
FOLDED_BY_FILE = "skips pytest folded by file, without a line (skip marks)"
OUTSIDE_TESTS = "skips raised outside the checkout's test files"


@dataclass(frozen=True)
class Named:
    model: str
    test: str
    test_class: str | None
    case: str | None


class Namer:
    """Names the items of reports against one checkout, its settings and its scan's tests and models."""

    def __init__(self, repo: Path, settings: ScanSettings, tests: Collection[str], models: Collection[str]):
        self.repo, self.tests, self.models = repo, frozenset(tests), frozenset(models)
        self.models_dir = PurePosixPath(settings.models_dir)
        self._files: dict[str, bool] = {}
        self._definitions: dict[str, dict[int, tuple[str | None, str]] | None] = {}

    def name(self, item: RunItem, report_model: str | None) -> Named | str | None:
        """The item's pair, why it could not be named (one of this module's reasons), or None for an
        item that is no pair of the scan."""
        path = PurePosixPath(item.path)
        in_models = self.models_dir in path.parents
        if item.name is not None:
            if not in_models:
                return None
            if not self._exists(item.path):
                return MISSING_FILE
            test, case = self._test_of(item.base, item.name)
            return self._named(path.parent.name, test, item.test_class, case)
        if item.line is None:  # a collection error, or skips pytest folded by file alone
            if item.outcome is RunOutcome.ERROR:
                return COLLECTION_ERROR if in_models else None
            return FOLDED_BY_FILE
        if not self._exists(item.path):
            return MISSING_FILE if in_models else OUTSIDE_TESTS
        found = self._definition_at(item.path, item.line)
        if found is None or not found[1].startswith("test"):
            return NO_TEST_AT_LINE  # a line of no test, or of a helper several tests call
        test, case = self._test_of(None, found[1])
        model = path.parent.name if in_models else item.model or report_model
        if model is None:
            return SHARED_LOCATION if test is not None else None
        return self._named(model, test, found[0] if in_models else None, case)

    def _named(
        self, model: str, test: str | None, test_class: str | None, case: str | None
    ) -> Named | str | None:
        if test is None:
            return None
        if model not in self.models:
            return UNKNOWN_MODEL
        return Named(model, test, test_class, case)

    def report_model(self, report: Report) -> str | None:
        """The one model whose test files a report's named items come from (None for several)."""
        models = {
            PurePosixPath(item.path).parent.name
            for item in report.items
            if item.name is not None and self.models_dir in PurePosixPath(item.path).parents
        }
        return models.pop() if len(models) == 1 else None

    def _test_of(self, base: str | None, name: str) -> tuple[str | None, str | None]:
        """(common test, case) of an item named ``name`` whose function is ``base`` when known.

        A function that is no common test runs under a common test's name when a decorator
        returned a function of another name (transformers' bare ``@is_flaky`` gives its inner
        ``decorator``) or a class assigns one (``test_x = helper``): the item's name tells then."""
        if base is not None and base in self.tests:
            return base, None if name == base else name
        plain = name.split("[", 1)[0]
        if plain in self.tests:
            return plain, None if plain == name else name
        for match in reversed(list(_CASE_NUMBER.finditer(plain))):  # the longest test it expands
            if plain[: match.start()] in self.tests:
                return plain[: match.start()], name
        return None, None

    def _exists(self, path: str) -> bool:
        if path not in self._files:
            self._files[path] = (self.repo / path).is_file()
        return self._files[path]

    def _definition_at(self, path: str, line: int | None) -> tuple[str | None, str] | None:
        """(class, function) whose definition starts at ``line`` (its first decorator or its ``def``),
        else the innermost function whose body holds it."""
        if path not in self._definitions:
            self._definitions[path] = _definitions(self.repo / path)
        lines = self._definitions[path]
        if lines is None or line is None:
            return None
        return lines.get(line)


def _definitions(path: Path) -> dict[int, tuple[str | None, str]] | None:
    """Line -> (class, function) for every line of every function of the file (a definition's first
    lines are its own; a body's lines its innermost function's), None when it cannot be read."""
    try:
        tree = ast.parse(read_source(path))
    except (OSError, SyntaxError, ValueError):
        return None
    lines: dict[int, tuple[str | None, str]] = {}
    starts: dict[int, tuple[str | None, str]] = {}

    def visit(node: ast.AST, owner: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                named = (owner, child.name)
                first = min([child.lineno, *(decorator.lineno for decorator in child.decorator_list)])
                for number in range(first, (child.end_lineno or child.lineno) + 1):
                    lines[number] = named
                starts[first] = starts[child.lineno] = named
                visit(child, owner)  # nested functions claim their own lines
            else:
                visit(child, owner)

    visit(tree, None)
    return {**lines, **starts}
