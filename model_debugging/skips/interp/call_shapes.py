"""What a call's syntax alone says about how the evaluator runs it, read once per ``ast.Call``.

Most calls the evaluator meets are of a value (``model_class(config)``, ``torch.zeros(...)``); a
few are run otherwise: ``pytest.skip(...)``, ``super().<name>(...)``, ``copy.<function>(x)`` and
``<name>(self, ...)``. Which one a call is depends on its syntax only, so it is kept on the node.
"""

from __future__ import annotations

import ast
from typing import Literal, NamedTuple

from model_debugging.skips.interp.effects import passes_self, super_method


class CallShape(NamedTuple):
    """``kind``: ``value`` (none of the others), ``skip`` (``pytest.skip``), ``super``
    (``super().<name>(...)``), ``copy`` (``copy.<function>(x)``: reads as ``x``) or ``module``
    (``<name>(self, ...)``: a module-level function handed the test); ``name``: the method or
    function of ``super`` and ``module``."""

    kind: Literal["value", "skip", "super", "copy", "module"]
    name: str = ""


_VALUE = CallShape("value")


def call_shape(node: ast.Call) -> CallShape:
    found = getattr(node, "_skip_call_shape", None)
    if found is None:
        found = node._skip_call_shape = _shape(node)  # type: ignore[attr-defined]
    return found


def _shape(node: ast.Call) -> CallShape:
    func = node.func
    owner = func.value if isinstance(func, ast.Attribute) else None
    if isinstance(owner, ast.Name) and owner.id in ("pytest", "copy"):
        if owner.id == "copy":
            return CallShape("copy")
        if func.attr == "skip":
            return CallShape("skip")
    inherited = super_method(node)
    if inherited is not None:
        return CallShape("super", inherited)
    if isinstance(func, ast.Name) and passes_self(node):
        return CallShape("module", func.id)
    return _VALUE
