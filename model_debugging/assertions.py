"""What counts as an assertion in a test's source: shared by the pytest plugin (which counts them
at run time) and the analyzer's inert-test search (which looks for them statically).

An ``assert`` statement, a call named ``assert*`` (``self.assertEqual``, ``torch.testing.
assert_close``, ``np.testing.assert_allclose``) or ``pytest.raises`` / ``pytest.warns``. A ``raise``
that is not a skip is a failure path, not an assertion: a test that checks only that way is a smoke
test. Standard library only: the plugin
imports it in every pytest run.
"""

from __future__ import annotations

import ast

CALLS = frozenset({"raises", "warns"})  # assertion calls not named assert*


def is_assertion(node: ast.AST) -> bool:
    """Whether ``node`` itself is an ``assert`` statement or a call of an assertion."""
    if isinstance(node, ast.Assert):
        return True
    if not isinstance(node, ast.Call):
        return False
    callee = node.func
    name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
    return name.startswith("assert") or name in CALLS


def holds(tree: ast.AST, check) -> bool:
    """Whether some node of ``tree`` passes ``check``."""
    return any(check(node) for node in ast.walk(tree))
