"""Turn every assertion of a test into a skip, so the skip evaluator says whether one is reached.

The analyzer's evaluator runs a common test's body for a test class to the first skip it meets
(see ``skips/interp/statements.py``). Given a copy of the test with a marker skip before every
statement that may check something, its verdict answers another question: *skipped with the
marker* means an assertion is reached; *ran* means the test can reach its end without reaching
one; *undecided* means it depends on what only the run knows.

A statement may check something when it holds an assertion (see :mod:`model_debugging.assertions`)
or a call of a helper that may: ``self.<method>`` whose definition does (or that the test files do not define, unless
``unittest.TestCase`` does), or a function the test defines in its body that does. The marker goes
before it, inside the bodies of loops, branches and ``with`` blocks as written.

    VALID (inert for a class with no ``_keys``):
        for model_class in self.all_model_classes:
            if model_class._keys is None:
                continue
            self.assertTrue(model_class._keys)
    INVALID (always checks):
        model = self.model_class()
        self.assertIsNotNone(model)
"""

from __future__ import annotations

import ast
import unittest
from collections.abc import Callable

from model_debugging.assertions import holds, is_assertion

MARK = "<an assertion is reached>"
_DEPTH = 4  # helpers followed to see whether they check something
_MARKER = f"self.skipTest({MARK!r})"


def checks(node: ast.AST) -> bool:
    """Whether ``node`` holds an assertion. A ``raise`` is not one: a test whose only checks are
    raises on its failure paths is a smoke test (it checks that nothing fails), and a raise on the
    path the evaluator takes ends the test as failed, never as an inert pass."""
    return holds(node, is_assertion)


def self_calls(node: ast.AST) -> set[str]:
    """Names of the ``self.<name>(...)`` calls in ``node``."""
    return {
        inner.func.attr
        for inner in ast.walk(node)
        if isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and isinstance(inner.func.value, ast.Name)
        and inner.func.value.id == "self"
    }


class HelperChecks:
    """Whether ``self.<name>(...)`` may check something, for one test class's definitions."""

    def __init__(self, definition: Callable[[str], ast.FunctionDef | None]):
        self.definition = definition
        self._known: dict[str, bool] = {}

    def __call__(self, name: str, depth: int = 0) -> bool:
        if name not in self._known:
            self._known[name] = False  # a helper calling itself adds nothing
            function = self.definition(name)
            if function is None:
                found = not hasattr(unittest.TestCase, name)  # a method the test files do not define
            else:
                found = checks(function) or (
                    depth < _DEPTH and any(self(called, depth + 1) for called in self_calls(function))
                )
            self._known[name] = found
        return self._known[name]


def _own_parts(statement: ast.stmt) -> list[ast.AST]:
    """What a statement evaluates itself, outside the bodies it holds."""
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.iter]
    if isinstance(statement, (ast.While, ast.If)):
        return [statement.test]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    return [statement]


class _Marker:
    def __init__(self, helper_checks: Callable[[str], bool], local_checks: frozenset[str]):
        self.helper_checks, self.local_checks = helper_checks, local_checks
        self.count = 0

    def may_check(self, part: ast.AST) -> bool:
        if checks(part) or any(self.helper_checks(name) for name in self_calls(part)):
            return True
        return any(
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id in self.local_checks
            for inner in ast.walk(part)
        )

    def body(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        marked: list[ast.stmt] = []
        for statement in statements:
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for name in ("body", "orelse", "finalbody"):
                    inner = getattr(statement, name, None)
                    if inner:
                        setattr(statement, name, self.body(inner))
                for handler in getattr(statement, "handlers", ()):
                    handler.body = self.body(handler.body)
            if any(self.may_check(part) for part in _own_parts(statement)):
                self.count += 1
                marked.append(ast.parse(_MARKER).body[0])
            marked.append(statement)
        return marked


def mark_assertions(
    function: ast.FunctionDef, helper_checks: Callable[[str], bool]
) -> ast.FunctionDef | None:
    """A new copy of ``function`` with the marker skip before every statement that may check
    something; None when none may (a test that checks nothing is a smoke test, never inert)."""
    copy = ast.parse(ast.unparse(function)).body[0]  # fresh nodes: the evaluator keeps notes on them
    local = frozenset(
        node.name
        for node in ast.walk(copy)
        if isinstance(node, ast.FunctionDef) and node is not copy and checks(node)
    )
    marker = _Marker(helper_checks, local)
    copy.body = marker.body(copy.body)
    return copy if marker.count else None


def surely_checks(function: ast.FunctionDef) -> bool:
    """Whether a marked ``function`` meets a marker before anything could end or skip it: at its top
    level or in a ``with`` there, after statements that hold no ``return``, ``continue``, ``break``,
    ``raise`` or call of ``skipTest``. Such a test need not be evaluated: it is not inert."""
    statements = list(function.body)
    while statements:
        statement = statements.pop(0)
        if isinstance(statement, ast.Expr) and ast.unparse(statement) == _MARKER:
            return True
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            statements[:0] = statement.body
            continue
        if any(
            isinstance(inner, (ast.Return, ast.Continue, ast.Break, ast.Raise))
            or (isinstance(inner, ast.Call) and "skip" in ast.unparse(inner.func).lower())
            for inner in ast.walk(statement)
        ):
            return False
    return False
