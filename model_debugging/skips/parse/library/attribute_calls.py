"""Calls a constructor makes that set an attribute on ``self`` under a name: ``setattr``, ``register_buffer``, ``add_module``."""

from __future__ import annotations

import ast

from model_debugging.skips.parse.ast_nodes import self_attribute
from model_debugging.skips.records.library import OPAQUE_VALUE, PLAIN_VALUE, UNNAMED_ATTRIBUTES, InitCall


def registered_attribute(callee: str, node: ast.Call) -> InitCall | None:
    """``self.register_buffer("x", ...)`` (an attribute ``x`` that is no module) and
    ``setattr(self, ...)`` / ``self.add_module(...)`` (attributes set under a name)."""
    first = node.args[0] if node.args else None
    literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    if callee in ("self.register_buffer", "self.register_parameter"):
        return InitCall(PLAIN_VALUE, target=literal) if literal else InitCall(UNNAMED_ATTRIBUTES)
    if callee in ("self.add_module", "self.register_module"):
        return InitCall(OPAQUE_VALUE, target=literal) if literal else InitCall(UNNAMED_ATTRIBUTES)
    if callee == "setattr" and isinstance(first, ast.Name) and first.id == "self":
        return None if set_attribute(callee, node) is not None else InitCall(UNNAMED_ATTRIBUTES)
    return None


def set_attribute(callee: str, node: ast.Call) -> tuple[str, ast.expr] | None:
    """(name, value) of ``setattr(self, "name", value)``; the name is ``self.<x>`` for
    ``setattr(self, self.<x>, value)`` (the attribute a class attribute names, such as
    ``base_model_prefix``)."""
    if callee != "setattr" or len(node.args) != 3 or ast.unparse(node.args[0]) != "self":
        return None
    name = node.args[1]
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return name.value, node.args[2]
    if self_attribute(name) is not None:
        return ast.unparse(name), node.args[2]
    return None
