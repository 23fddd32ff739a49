"""``if <anything but class flags>: <skip>``: a skip decided at run time, reported as a condition."""

from __future__ import annotations

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, body_of, register
from model_debugging.skips.parse.rules.flag_guard import flag_expression, guarded_skips
from model_debugging.skips.parse.rules.nodes import code
from model_debugging.skips.records.test_files import Condition


@register
class RuntimeGuard(Rule):
    """A guarded skip whose condition is not made of class flags (``torch.cuda.is_available()``, ...)."""

    INVALID = (
        'def test_x(self):\n    if not torch.cuda.is_available():\n        self.skipTest("gpu")\n    run()',
        'def test_x(self):\n    if self.has_attentions and is_flaky():\n        pytest.skip("flaky")\n    run()',
    )
    VALID = (
        'def test_x(self):\n    if not self.has_attentions:\n        self.skipTest("flag")\n    run()',
        'def test_x(self):\n    if not torch.cuda.is_available():\n        print("no skip here")\n    run()',
    )

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> tuple[Condition, ...]:
        return tuple(
            Condition(f"if {code(statement.test)}: skip", context.line)
            for statement, _ in guarded_skips(body_of(node), context.aliases)
            if flag_expression(statement.test) is None
        )
