"""A value written in a library file as a record keeps it: a literal, a class name, a value of the machine, or not a literal."""

from __future__ import annotations

import ast

from model_debugging.skips.records.library import (
    ClassName,
    EnvironmentValue,
    Value,
)
from model_debugging.skips.records.literals import NonLiteral


def value_of(node: ast.expr | None, *, keep_code: bool = True) -> Value:
    """A literal's value, a :class:`ClassName` for a name, else :class:`NonLiteral` with the code
    (without it unless ``keep_code``: unparsing it costs more than the rest)."""
    if node is None:
        return NonLiteral("")
    if isinstance(node, ast.Name):
        return ClassName(node.id) if node.id not in ("True", "False", "None") else ast.literal_eval(node)
    if isinstance(node, ast.Attribute):
        return ClassName(node.attr)
    if isinstance(node, ast.Dict) and all(isinstance(key, ast.Constant) for key in node.keys):
        return {key.value: value_of(value) for key, value in zip(node.keys, node.values, strict=True)}
    if _is_availability_check(node):
        return EnvironmentValue(ast.unparse(node))
    if isinstance(node, ast.Call) and not _is_empty_set(node):
        return NonLiteral(ast.unparse(node) if keep_code else "")  # what literal_eval raises on, cheaper
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NonLiteral(ast.unparse(node) if keep_code else "")


def _is_empty_set(node: ast.Call) -> bool:
    """``set()``, the one call ``ast.literal_eval`` evaluates."""
    return isinstance(node.func, ast.Name) and node.func.id == "set" and not node.args and not node.keywords


def _is_availability_check(node: ast.expr) -> bool:
    """``is_grouped_mm_available()``-style calls: they depend on the machine, not on the model."""
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name.startswith("is_") and name.endswith("_available")
