"""A decorator whose skip depends on the environment: ``@require_*``, ``@slow``, runtime skipIf."""

from __future__ import annotations

import libcst as cst

from model_debugging.skips.parse.rules import nodes
from model_debugging.skips.parse.rules.base import Context, Rule, register
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.records.test_files import Condition
from model_debugging.skips.source.guard_helpers import is_guard_name

_CONDITIONAL = nodes.SKIP_IF_DECORATORS | nodes.SKIP_UNLESS_DECORATORS


def decorator_condition(decorator: cst.Decorator, context: Context) -> Condition | None:
    name, call = nodes.decorator_call(decorator, context.aliases, context.names)
    if name is None:
        return None
    last = name.rsplit(".", 1)[-1]
    if is_guard_name(last):
        return Condition(nodes.code(decorator.decorator), context.line)
    if name in _CONDITIONAL and call is not None:
        condition = nodes.condition_argument(call.args)
        if condition is None or isinstance(nodes.literal_value(condition, context.names), NonLiteral):
            return Condition(nodes.code(decorator.decorator), context.line)
    return None


@register
class ConditionDecorator(Rule):
    """Every environment-dependent decorator, reported as a condition (never as a skip)."""

    INVALID = (
        "@require_torch_gpu\ndef test_x(self):\n    run()",
        "@slow\ndef test_x(self):\n    run()",
        '@unittest.skipIf(not has_cuda(), "gpu")\ndef test_x(self):\n    run()',
    )
    VALID = (
        '@unittest.skip("always")\ndef test_x(self):\n    run()',
        '@unittest.skipIf(True, "literal")\ndef test_x(self):\n    run()',
        "@parameterized.expand([1, 2])\ndef test_x(self, value):\n    run()",
    )

    @staticmethod
    def check(node: cst.FunctionDef | cst.ClassDef, context: Context) -> tuple[Condition, ...]:
        found = (decorator_condition(decorator, context) for decorator in node.decorators)
        return tuple(condition for condition in found if condition is not None)
