"""What the tester's values are in a test: the tensors it builds (their shape, whether they hold a
zero, never None) and the numbers it computes (``vocab_size - 1``: never None).

Registered in :data:`~model_debugging.skips.models.registry.HANDLERS`.
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import UNHANDLED, Tensor, Unknown, source_expression
from model_debugging.skips.models.registry import HANDLERS


@HANDLERS.attribute(Tensor)
def _tensor_attribute(facts: object, owner: Tensor, name: str, unknown: Unknown, missing: object) -> object:
    if name == "ndim" and owner.dims is not None:
        return len(owner.dims)
    return unknown


@HANDLERS.contains(Tensor)
def _zero_in_tensor(facts: object, container: Tensor, item: object) -> object:
    """``0 in mask``: whether the tester's tensor holds a zero."""
    if type(item) in (int, bool) and item == 0:
        return container.has_zero
    return UNHANDLED


@HANDLERS.comparison
def _never_none(facts: object, operator: ast.cmpop, left: object, right: object) -> object:
    """A tensor the tester built, or a number it computed, is never None."""
    if not isinstance(operator, (ast.Is, ast.IsNot)):
        return UNHANDLED
    if {type(left), type(right)} == {Tensor, type(None)}:
        return isinstance(operator, ast.IsNot)
    if compared_number(right if left is None else left, left, right):
        return isinstance(operator, ast.IsNot)
    return UNHANDLED


def compared_number(value: object, left: object, right: object) -> bool:
    """``value`` is compared with None and is an unknown written as arithmetic on numbers and names
    (a tester's ``vocab_size - 1``): a number, never None."""
    if (left is not None and right is not None) or not isinstance(value, Unknown) or value.node is not None:
        return False
    node = source_expression(value)
    return isinstance(node, ast.BinOp) and all(
        isinstance(
            part,
            (
                ast.BinOp,
                ast.Name,
                ast.Constant,
                ast.Attribute,
                ast.UnaryOp,
                ast.operator,
                ast.unaryop,
                ast.expr_context,
            ),
        )
        and not (isinstance(part, ast.Constant) and not isinstance(part.value, (int, float)))
        for part in ast.walk(node)
    )
