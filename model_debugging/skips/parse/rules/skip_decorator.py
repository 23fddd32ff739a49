"""A skip decorator: ``@unittest.skip``, ``@pytest.mark.skip``, or skipIf/skipUnless on a literal."""

from __future__ import annotations

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, register
from model_debugging.skips.parse.rules.nodes import (
    SKIP_DECORATORS,
    SKIP_IF_DECORATORS,
    SKIP_UNLESS_DECORATORS,
    code,
    condition_argument,
    decorator_call,
    literal_value,
    reason_of,
)
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.records.test_files import UNCONDITIONAL_REASON, Skip, SkipKind


def decorator_skip(decorator: cst.Decorator, context: Context) -> Skip | None:
    """The skip one decorator always applies, or None (runtime conditions are not skips)."""
    name, call = decorator_call(decorator, context.aliases, context.names)
    args = call.args if call else ()
    if name in SKIP_DECORATORS:
        return Skip(SkipKind.DECORATOR, reason_of(args) or UNCONDITIONAL_REASON, context.line)
    if name in SKIP_IF_DECORATORS | SKIP_UNLESS_DECORATORS and call is not None:
        condition = condition_argument(args)
        value = literal_value(condition, context.names) if condition is not None else NonLiteral("")
        if isinstance(value, NonLiteral):
            return None
        if bool(value) == (name in SKIP_IF_DECORATORS):
            return Skip(
                SkipKind.DECORATOR, reason_of(args, 1) or f"condition: {code(condition)}", context.line
            )
    return None


@register
class SkipDecorator(Rule):
    """The first decorator that always skips, as pytest's ``evaluate_skip_marks`` would find it."""

    INVALID = (
        '@unittest.skip("no attention")\ndef test_x(self):\n    run()',
        '@unittest.skip(reason="a " "b")\ndef test_x(self):\n    run()',
        "@pytest.mark.skip\ndef test_x(self):\n    run()",
        '@pytest.mark.skip(reason=(\n    "multi"\n    " line"\n))\ndef test_x(self):\n    run()',
        '@skip("imported alias")\ndef test_x(self):\n    run()',
        '@unittest.skipIf(True, "always")\ndef test_x(self):\n    run()',
        '@unittest.skipUnless(0, "never runs")\ndef test_x(self):\n    run()',
    )
    VALID = (
        '@unittest.skipIf(torch.cuda.is_available(), "gpu")\ndef test_x(self):\n    run()',
        "@slow\ndef test_x(self):\n    run()",
        '@unittest.skipIf(False, "never")\ndef test_x(self):\n    run()',
        '@other.skip("not unittest")\ndef test_x(self):\n    run()',
    )

    @staticmethod
    def check(node: cst.FunctionDef | cst.ClassDef, context: Context) -> Skip | None:
        for decorator in node.decorators:
            found = decorator_skip(decorator, context)
            if found is not None:
                return found
        return None
