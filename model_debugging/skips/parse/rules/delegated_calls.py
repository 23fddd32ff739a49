"""``self.helper(...)``, ``super().test_x(...)`` and ``helper(...)`` statements a test always runs."""

from __future__ import annotations

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, body_of, register
from model_debugging.skips.parse.rules.nodes import dotted_name
from model_debugging.skips.parse.rules.reach import reached


def _delegation(small: cst.BaseSmallStatement) -> tuple[str, str] | None:
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return None
    func = small.value.func
    if isinstance(func, cst.Name):  # a function of the module, or one it imports
        return "module", func.value
    if not isinstance(func, cst.Attribute):
        return None
    owner = func.value
    if isinstance(owner, cst.Name) and owner.value == "self":
        return "self", func.attr.value
    if isinstance(owner, cst.Call) and dotted_name(owner.func) == "super" and not owner.args:
        return "super", func.attr.value
    return None


@register
class DelegatedCalls(Rule):
    """Calls the body always reaches (see ``reach.py``): their skips and guards are the caller's
    (a helper that calls ``self.skipTest`` skips the test), so the resolver follows them."""

    INVALID = (
        "def test_x(self):\n    self.check_model()",
        "def test_x(self):\n    super().test_x()",
        "def test_x(self):\n    with torch.no_grad():\n        self.check_model()",
        "def test_x(self):\n    skip_unless_supported(self)",
    )
    VALID = (
        "def test_x(self):\n    return\n    self.check_model()",
        "def test_x(self):\n    self.model.helper()",
        "def test_x(self):\n    super(Other, self).test_x()",
        "def test_x(self):\n    if self.supports_it:\n        return\n    self.check_model()",
    )

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> tuple[tuple[str, str], ...]:
        calls = []
        for statement in reached(body_of(node), context.aliases):
            if isinstance(statement, cst.SimpleStatementLine):
                calls += filter(None, map(_delegation, statement.body))
        return tuple(calls)
