"""Which classes a name or an expression of a constructor may name: the callee of a call as
written, ``A if c else B``, a module-level table's entries, and local names bound only to classes
(or only to computed values, which never build a model when called, or only to plain values, which
are never a module)."""

from __future__ import annotations

import ast

from model_debugging.skips.parse.ast_nodes import dotted_name, walk
from model_debugging.skips.parse.library.function_nodes import FunctionNodes
from model_debugging.skips.parse.signatures import signature


def class_tables(body: list[ast.stmt]) -> dict[str, tuple[str, ...]]:
    """Module-level ``NAME = {"key": SomeClass, ...}`` dicts whose values are all class names."""
    tables: dict[str, tuple[str, ...]] = {}
    for node in body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Dict)
            and node.value.values
            and all(isinstance(value, (ast.Name, ast.Attribute)) for value in node.value.values)
        ):
            tables[node.targets[0].id] = tuple(written_callee(value) for value in node.value.values)
    return tables


def classes_named(node: ast.expr, tables: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The classes ``node`` may name: one class, either of ``A if c else B``, or a table's entries."""
    if isinstance(node, ast.IfExp):
        body, orelse = classes_named(node.body, tables), classes_named(node.orelse, tables)
        if is_none(node.orelse) or is_none(node.body):  # `A if c else None`: a call can only build A
            return body or orelse
        return (*body, *orelse) if body and orelse else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        # a table of the file gives its classes; another (`ACT2CLS[...]`, imported) stays an entry of
        # that table, which the module tree judges by where the table comes from
        return tables.get(node.value.id) or (ast.unparse(node),)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return (written_callee(node),)
    return None


def bound_to_calls(nodes: list[ast.AST]) -> set[str]:
    """Local names every assignment of which binds a computed value (a call's result, an indexed
    result, arithmetic): never a class, so calling one of its methods builds no model."""
    bound: dict[str, bool] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            computed = isinstance(node.value, (ast.Call, ast.BinOp, ast.Constant)) or (
                isinstance(node.value, ast.Subscript)
                and isinstance(node.value.value, (ast.Call, ast.Subscript))
            )
            bound[name] = bound.get(name, True) and computed
    return {name for name, only_calls in bound.items() if only_calls}


def class_aliases(nodes: list[ast.AST], tables: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Local names bound only to classes (``cls = A if cross else B``, ``cls = A`` in one branch and
    ``cls = B`` in another) or to a table's entry: the classes a call of that name may build."""
    bound: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
    aliases: dict[str, tuple[str, ...]] = {}
    for name, values in bound.items():
        found = [classes_named(value, tables) for value in values if not is_none(value)]
        if all(found):
            aliases[name] = tuple(dict.fromkeys(choice for choices in found for choice in choices))
    return aliases


def is_none(node: ast.expr) -> bool:
    """``None``: a name bound to it builds nothing when called (the call would fail first)."""
    return isinstance(node, ast.Constant) and node.value is None


def written_callee(node: ast.expr) -> str:
    """``nn.Linear`` / ``LlamaModel`` / ``super().__init__``; anything else (a subscript, a call's
    result) as its source text, which resolves to nothing."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = node.value
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            return f"super().{node.attr}"
        if isinstance(owner, (ast.Name, ast.Attribute)):
            return f"{written_callee(owner)}.{node.attr}"
    return ast.unparse(node)


def bound_to_plain(function: ast.FunctionDef | ast.AsyncFunctionDef, nodes: FunctionNodes) -> set[str]:
    """Local names every binding of which is a value that is never a module (see :func:`is_plain`);
    ``nodes`` are the nodes of ``function``."""
    bound: dict[str, bool] = {}
    for node in nodes.of(ast.Assign):
        for target in node.targets:
            if target.__class__ is ast.Name:
                bound[target.id] = bound.get(target.id, True) and is_plain(node.value)
            else:  # `self.x = ...`, `a, b = ...`, `x[i] = ...`: every name written there
                _bound_otherwise(bound, target)
    for kind in _BOUND_OTHERWISE:
        for node in nodes.of(kind):
            _bound_otherwise(bound, getattr(node, "target", None) or node)
    for name in signature(function, method=False).names:
        bound[name] = name == "config" and bound.get("config", True)
    return {name for name, plain in bound.items() if plain}


# Statements binding names some other way than `name = value` (`with` binds the names of its whole block).
_BOUND_OTHERWISE = (ast.For, ast.comprehension, ast.With, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)


def _bound_otherwise(bound: dict[str, bool], target: ast.AST) -> None:
    """Every name in ``target`` is bound to something else than a plain value."""
    for name in walk(target):
        if name.__class__ is ast.Name:
            bound[name.id] = False


def is_plain(value: ast.expr) -> bool:
    """A value that is never a module: a literal, a display, arithmetic, a comparison, a function, or
    the configuration (``config``, ``config.x``, ``self.config.x``)."""
    if isinstance(value, (ast.Constant, ast.JoinedStr, ast.Lambda, ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return True
    if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(value, ast.IfExp):
        return is_plain(value.body) and is_plain(value.orelse)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "getattr"
        and value.args
    ):
        return all(is_plain(argument) for argument in value.args)  # a value of the configuration
    text = dotted_name(value)  # "" for anything but a name or a chain of attributes on one
    return text == "config" or text.startswith(("config.", "self.config.")) or text == "self.config"
