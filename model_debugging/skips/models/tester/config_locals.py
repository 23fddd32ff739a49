"""The local names of a tester's ``get_config``: its literal defaults and its single assignments, put in place of the names in what it passes; and a configuration built, then set attribute by attribute."""

from __future__ import annotations

import ast
import copy

from model_debugging.skips.parse.signatures import signature


def built_then_set(function: ast.FunctionDef) -> tuple[ast.Call, dict[str, ast.expr]] | None:
    """``config = XConfig(...)`` then only ``config.<name> = value`` before ``return config``: the
    call and what is set on it; None when the name is used any other way (handed to a call, a
    method of it called, a part of it changed)."""
    returns = [node for node in ast.walk(function) if isinstance(node, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Name):
        return None
    name = returns[0].value.id
    built, later = None, {}
    for statement in function.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == name:
            if built is not None or not isinstance(statement.value, ast.Call):
                return None
            built = statement.value
        elif (
            len(targets) == 1
            and isinstance(targets[0], ast.Attribute)
            and isinstance(targets[0].value, ast.Name)
            and targets[0].value.id == name
        ):
            later[targets[0].attr] = statement.value
        elif not isinstance(statement, ast.Return) and _uses(statement, name):
            return None
    return (built, later) if built is not None else None


def _uses(statement: ast.stmt, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(statement))


def literal_defaults(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """Parameters with a literal default, read as that default: the scanner calls ``get_config()``
    without arguments, and a call with other values leaves the configuration unknown
    (the tester reader's ``default_call``)."""
    defaults = signature(function, method=False).defaults
    return {name: default for name, default in defaults.items() if isinstance(default, ast.Constant)}


def single_assignments(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """Local names bound once by a plain assignment and never changed (``part = PartConfig(...)``)."""
    stores: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif (
            isinstance(node, (ast.Attribute, ast.Subscript))
            and isinstance(node.value, ast.Name)
            and (isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load))
        ):
            stores[node.value.id] = 2  # changed in place, or a method of it called: not read
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return {name: value for name, value in values.items() if stores.get(name) == 1}


def with_locals(node: ast.expr, local: dict[str, ast.expr]) -> ast.expr:
    """``node`` with the local names ``get_config`` binds once replaced by what they bind, also inside
    what they bind (``vision = VisionConfig(backbone_config=backbone)``, ``backbone = BackboneConfig()``),
    each name at most once along a path, so a name bound to an expression that reads it stays a name."""
    if not any(isinstance(inner, ast.Name) and inner.id in local for inner in ast.walk(node)):
        return node
    return _LocalNames(local, frozenset()).visit(copy.deepcopy(node))  # the function's tree is shared


class _LocalNames(ast.NodeTransformer):
    def __init__(self, local: dict[str, ast.expr], open_names: frozenset[str]):
        self.local, self.open_names = local, open_names

    def visit_Name(self, node: ast.Name) -> ast.expr:  # noqa: N802 - ast's visitor name
        value = self.local.get(node.id)
        if value is None or not isinstance(node.ctx, ast.Load) or node.id in self.open_names:
            return node
        return _LocalNames(self.local, self.open_names | {node.id}).visit(copy.deepcopy(value))
