"""``if <anything but class flags>: <skip>``: a skip decided at run time, reported as a condition."""

from __future__ import annotations

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, body_of, register
from model_debugging.skips.parse.rules.flag_guard import flag_expression, guarded_skips
from model_debugging.skips.parse.rules.nodes import code
from model_debugging.skips.parse.rules.reach import catches_skip, holds_skip, reached
from model_debugging.skips.records.test_files import Condition


def _header(statement: cst.With | cst.Try) -> str:
    """``with self.subTest()`` / ``try ... except Error``: what the block catches with."""
    if isinstance(statement, cst.With):
        return "with " + ", ".join(code(item.item) for item in statement.items)
    types = [code(handler.type) if handler.type is not None else "" for handler in statement.handlers]
    return "try ... " + ", ".join(f"except {name}".strip() for name in types)


@register
class RuntimeGuard(Rule):
    """A guarded skip whose condition is not made of class flags (``torch.cuda.is_available()``, ...)."""

    INVALID = (
        'def test_x(self):\n    if not torch.cuda.is_available():\n        self.skipTest("gpu")\n    run()',
        'def test_x(self):\n    if self.has_attentions and is_flaky():\n        pytest.skip("flaky")\n    run()',
        'def test_x(self):\n    with self.assertRaises(SomeError):\n        self.skipTest("unless SomeError is one")',
    )
    VALID = (
        'def test_x(self):\n    if not self.has_attentions:\n        self.skipTest("flag")\n    run()',
        'def test_x(self):\n    if not torch.cuda.is_available():\n        print("no skip here")\n    run()',
        'def test_x(self):\n    with self.assertRaises(ValueError):\n        self.skipTest("a ValueError is no skip")',
    )

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> tuple[Condition, ...]:
        found = [
            Condition(f"if {code(statement.test)}: skip", context.line)
            for statement, _ in guarded_skips(body_of(node), context.aliases)
            if flag_expression(statement.test) is None
        ]
        for statement in reached(body_of(node), context.aliases):
            if (
                isinstance(statement, (cst.With, cst.Try))
                and catches_skip(statement, context.aliases) is None
                and holds_skip(statement, context.aliases)
            ):
                found.append(
                    Condition(f"a skip inside {_header(statement)} (which may catch it)", context.line)
                )
        return tuple(found)
