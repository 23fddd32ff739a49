"""``if <class flags>: <skip>`` at the top of a test: skipped for the classes whose flags say so."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, body_of, register
from model_debugging.skips.parse.rules.nodes import code, dotted_name, literal_value
from model_debugging.skips.parse.rules.reach import is_guard, reached, skip_statement
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.records.test_files import BoolOp, Equals, Flag, FlagExpression, Guard, Not


def guarded_skips(
    body: Sequence[cst.BaseStatement], aliases: Mapping[str, str]
) -> Iterator[tuple[cst.If, str]]:
    """The ``if`` statements the body always reaches (see ``reach.py``) whose first statement
    skips, with the reason."""
    for statement in reached(body, aliases):
        if isinstance(statement, cst.If) and is_guard(statement, aliases):
            yield statement, skip_statement(statement.body.body[0], aliases)


def _getattr_flag(node: cst.Call) -> Flag | None:
    """``getattr(self, "x")`` / ``getattr(self.model_tester, "x", default)`` with a literal default."""
    owner, attribute = dotted_name(node.args[0].value), literal_value(node.args[1].value)
    if owner not in {"self", "self.model_tester"} or not isinstance(attribute, str):
        return None
    path = (*owner.split(".")[1:], attribute)
    if len(node.args) == 3:
        default = literal_value(node.args[2].value)
        return None if isinstance(default, NonLiteral) else Flag(path, default, has_default=True)
    return Flag(path)


def flag_expression(node: cst.BaseExpression) -> FlagExpression | None:
    """Translate a condition made only of class flags into records, or None if it uses anything else."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = flag_expression(node.expression)
        return None if inner is None else Not(inner)
    if isinstance(node, cst.BooleanOperation):
        left, right = flag_expression(node.left), flag_expression(node.right)
        if left is None or right is None:
            return None
        return BoolOp("and" if isinstance(node.operator, cst.And) else "or", (left, right))
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        target = node.comparisons[0]
        operand, value = flag_expression(node.left), literal_value(target.comparator)
        if operand is None or isinstance(value, NonLiteral):
            return None
        if isinstance(target.operator, (cst.Equal, cst.Is)):
            return Equals(operand, value)
        if isinstance(target.operator, (cst.NotEqual, cst.IsNot)):
            return Equals(operand, value, negated=True)
        return None
    name = dotted_name(node)
    if name is not None and name.startswith("self.") and name.count(".") <= 2:
        return Flag(tuple(name.split(".")[1:]))
    if isinstance(node, cst.Call) and dotted_name(node.func) == "getattr" and 2 <= len(node.args) <= 3:
        return _getattr_flag(node)
    return None


@register
class FlagGuard(Rule):
    """A guard on class flags; the resolver decides it per class from the flags' values in the MRO."""

    INVALID = (
        'def test_x(self):\n    if not self.test_resize_embeddings:\n        self.skipTest(reason="off")\n    run()',
        'def test_x(self):\n    if not self.model_tester.is_training:\n        self.skipTest("no")\n    run()',
        'def test_x(self):\n    if not getattr(self.model_tester, "is_training", False):\n'
        '        self.skipTest("no")\n    run()',
        'def test_x(self):\n    if self.model_tester.vocab_size == 0:\n        self.skipTest("no")\n    run()',
        'def test_x(self):\n    with torch.no_grad():\n        if not self.has_attentions:\n            self.skipTest("no")',
    )
    VALID = (
        'def test_x(self):\n    if not torch.cuda.is_available():\n        self.skipTest("gpu")\n    run()',
        'def test_x(self):\n    if not self.has_attentions:\n        print("no skip here")\n    run()',
        'def test_x(self):\n    return\n    if not self.has_attentions:\n        self.skipTest("unreachable")',
        "def test_x(self):\n    if self.supports_it:\n        return\n    if not self.has_attentions:\n"
        '        self.skipTest("only when it does not return first")',
    )

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> tuple[Guard, ...]:
        found = []
        for statement, reason in guarded_skips(body_of(node), context.aliases):
            expression = flag_expression(statement.test)
            if expression is not None:
                found.append(Guard(expression, reason, context.line, code(statement.test)))
        return tuple(found)
