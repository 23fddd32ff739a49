"""A skip statement at the top level of a test's body: it runs whatever the class."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, body_of, register
from model_debugging.skips.parse.rules.nodes import (
    SKIP_CALLS,
    SKIP_EXCEPTIONS,
    UNCONDITIONAL_REASON,
    canonical,
    dotted_name,
    is_return,
    reason_of,
)
from model_debugging.skips.records.test_files import Skip, SkipKind


def skip_statement(statement: cst.BaseStatement, aliases: Mapping[str, str]) -> str | None:
    """The reason if ``statement`` is ``self.skipTest(...)``, ``pytest.skip(...)`` or ``raise SkipTest(...)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or not statement.body:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        name = dotted_name(call.func)
        if name == "self.skipTest" or canonical(name, aliases) in SKIP_CALLS:
            return reason_of(call.args) or UNCONDITIONAL_REASON
    if isinstance(small, cst.Raise) and small.exc is not None:
        exc = small.exc
        call = exc if isinstance(exc, cst.Call) else None
        name = canonical(dotted_name(call.func if call else exc), aliases)
        if name in SKIP_EXCEPTIONS or (name or "").endswith("SkipTest"):
            return (reason_of(call.args) if call else None) or UNCONDITIONAL_REASON
    return None


@register
class BodySkip(Rule):
    """``self.skipTest`` / ``pytest.skip`` / ``raise SkipTest`` reached before any ``return``."""

    INVALID = (
        'def test_x(self):\n    self.skipTest(reason="broken")',
        'def test_x(self):\n    """Doc."""\n    pytest.skip("broken")',
        'def test_x(self):\n    raise unittest.SkipTest("broken")',
    )
    VALID = (
        'def test_x(self):\n    for m in self.all_model_classes:\n        self.skipTest("inside a loop")',
        'def test_x(self):\n    return\n    self.skipTest("unreachable")',
        'def test_x(self):\n    if has_cuda():\n        self.skipTest("gpu")',
    )

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> Skip | None:
        for statement in body_of(node):
            if is_return(statement):
                return None
            reason = skip_statement(statement, context.aliases)
            if reason is not None:
                return Skip(SkipKind.BODY, reason, context.line)
        return None
