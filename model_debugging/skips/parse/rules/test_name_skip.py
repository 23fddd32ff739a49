"""Skips chosen by the running test's name: ``if self._testMethodName.startswith(x): self.skipTest(...)``.

Written in ``setUp`` (or a helper it calls), such a check skips only the tests whose name matches
literal strings, e.g. a loop over a literal list of name prefixes. Anything not literal is left alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, body_of, register
from model_debugging.skips.parse.rules.flag_guard import guarded_skips
from model_debugging.skips.parse.rules.nodes import dotted_name, is_return, literal_value
from model_debugging.skips.records.test_files import NameSkip

_TEST_NAME = "self._testMethodName"


def _strings(value: object) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def _names_matched(
    test: cst.BaseExpression, bound: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, ...], bool] | None:
    """``(names, is_prefix)`` when ``test`` compares the test's name with literal strings (or a
    name bound to them in ``bound``), else None."""

    def strings(node: cst.BaseExpression) -> tuple[str, ...] | None:
        if isinstance(node, cst.Name) and node.value in bound:
            return bound[node.value]
        return _strings(literal_value(node))

    if (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Attribute)
        and len(test.args) == 1
        and test.func.attr.value == "startswith"
        and dotted_name(test.func.value) == _TEST_NAME
    ):
        names = strings(test.args[0].value)
        return None if names is None else (names, True)
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and dotted_name(test.left) == _TEST_NAME
    ):
        target = test.comparisons[0]
        names = strings(target.comparator)
        equal_to_one = isinstance(target.comparator, cst.Name) or isinstance(
            literal_value(target.comparator), str
        )
        if names is not None and isinstance(target.operator, cst.Equal) and equal_to_one:
            return names, False  # a loop variable stands for each of its names in turn
        if names is not None and isinstance(target.operator, cst.In):
            return names, False
    return None


# The nodes whose literal value may be strings: only these are evaluated (the value of any other
# node is its code, whose text costs more than the rest of the rule).
_STRING_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.List, cst.Tuple, cst.Set)


def _literal_lists(statement: cst.BaseStatement) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``name = [<strings>]`` written as a statement of its own."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        assign = statement.body[0]
        if (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and isinstance(assign.value, _STRING_NODES)
        ):
            names = _strings(literal_value(assign.value))
            if names is not None:
                yield assign.targets[0].target.value, names


@register
class TestNameSkip(Rule):
    """A skip taken only by the tests whose name equals or starts with literal strings."""

    INVALID = (
        'def setUp(self):\n    for name in ["test_beam", "test_assisted"]:\n'
        '        if self._testMethodName.startswith(name):\n            self.skipTest(reason="greedy only")',
        'def setUp(self):\n    names = ("test_a", "test_b")\n    for name in names:\n'
        '        if self._testMethodName == name:\n            self.skipTest("no")',
        'def setUp(self):\n    if self._testMethodName in ["test_a", "test_b"]:\n        self.skipTest("no")',
        'def setUp(self):\n    if self._testMethodName.startswith(("test_a", "test_b")):\n        self.skipTest("no")',
    )
    VALID = (
        "def setUp(self):\n    for name in self.skippable:\n"
        '        if self._testMethodName.startswith(name):\n            self.skipTest("not literal")',
        'def setUp(self):\n    if self._testMethodName.endswith("_slow"):\n        self.skipTest("not a prefix")',
        'def setUp(self):\n    return\n    if self._testMethodName == "test_a":\n        self.skipTest("unreachable")',
        'def setUp(self):\n    if self.name == "test_a":\n        self.skipTest("another attribute")',
    )

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> tuple[NameSkip, ...]:
        found: list[NameSkip] = []
        bound: dict[str, tuple[str, ...]] = {}
        body = body_of(node)
        for statement in body:
            if is_return(statement):
                break
            bound.update(_literal_lists(statement))
            if isinstance(statement, cst.For) and isinstance(statement.target, cst.Name):
                items = bound.get(statement.iter.value) if isinstance(statement.iter, cst.Name) else None
                items = items or _strings(literal_value(statement.iter))
                loop_body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else ()
                if items is not None:
                    for guard, reason in guarded_skips(loop_body, context.aliases):
                        matched = _names_matched(guard.test, {statement.target.value: items})
                        if matched is not None:
                            found.append(NameSkip(matched[0], matched[1], reason, context.line))
        for guard, reason in guarded_skips(body, context.aliases):
            matched = _names_matched(guard.test, bound)
            if matched is not None:
                found.append(NameSkip(matched[0], matched[1], reason, context.line))
        return tuple(found)
