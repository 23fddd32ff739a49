"""A skip statement a test's body always reaches: it skips whatever the class."""

from __future__ import annotations

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, body_of, register
from model_debugging.skips.parse.rules.reach import reached, skip_statement
from model_debugging.skips.records.test_files import Skip, SkipKind


@register
class BodySkip(Rule):
    """``self.skipTest`` / ``pytest.skip`` / ``raise SkipTest`` the body always reaches: at its top
    level, or in a ``with`` block or a ``try`` that cannot catch it, before anything that may return."""

    INVALID = (
        'def test_x(self):\n    self.skipTest(reason="broken")',
        'def test_x(self):\n    """Doc."""\n    pytest.skip("broken")',
        'def test_x(self):\n    raise unittest.SkipTest("broken")',
        'def test_x(self):\n    with tempfile.TemporaryDirectory() as tmp:\n        self.skipTest("in a with block")',
        'def test_x(self):\n    try:\n        self.skipTest("in try/finally")\n    finally:\n        cleanup()',
        'def test_x(self):\n    try:\n        self.skipTest("not caught")\n    except ValueError:\n        pass',
    )
    VALID = (
        'def test_x(self):\n    for m in self.all_model_classes:\n        self.skipTest("inside a loop")',
        'def test_x(self):\n    return\n    self.skipTest("unreachable")',
        'def test_x(self):\n    if has_cuda():\n        self.skipTest("gpu")',
        'def test_x(self):\n    if self.supports_it:\n        return super().test_x()\n    self.skipTest("not always")',
        'def test_x(self):\n    try:\n        self.skipTest("caught")\n    except Exception:\n        pass',
        'def test_x(self):\n    with self.assertRaises(unittest.SkipTest):\n        self.skipTest("caught")',
        'def test_x(self):\n    try:\n        self.skipTest("swallowed")\n    finally:\n        return',
    )

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> Skip | None:
        for statement in reached(body_of(node), context.aliases):
            reason = skip_statement(statement, context.aliases)
            if reason is not None:
                return Skip(SkipKind.BODY, reason, context.line)
        return None
