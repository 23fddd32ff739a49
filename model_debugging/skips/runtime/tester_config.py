"""The keywords a tester's ``get_config`` passes to its configuration, read from its source.

``return XConfig(key=self.attr, ...)``, or ``config = XConfig(...)`` followed only by
``config.key = value`` and ``return config``. A value naming a tester attribute is that attribute's
value; a local name ``get_config`` binds once is what it binds; a parameter is its literal default
(the scanner calls ``get_config()`` without arguments); a dict is read item by item.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.runtime.context import ABSENT
from model_debugging.skips.runtime.values import Unknown


def config_keywords(
    function: ast.FunctionDef | None,
    tester_attribute: Callable[[str], object],
    tester_method: Callable[[str], ast.FunctionDef | None] = lambda _: None,
) -> dict[str, object] | None:
    """``name -> value`` of ``XConfig(name=self.attr, ...)`` returned by the tester's ``get_config``
    (``function``). None when it has no such method with a plain call (``self.config_class(**kwargs)``).
    A value ``self.<method>()`` whose method only returns ``PartConfig(...)`` is that call's source
    (``tester_method`` finds the tester's methods).
    """
    if function is None:
        return None
    call = next(
        (
            node.value
            for node in ast.walk(function)
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Call)
        ),
        None,
    )
    later: dict[str, ast.expr] = {}
    if call is None:  # config = XConfig(...); config.x = ...; return config
        call, later = _built_then_set(function) or (None, {})
    if call is None or any(keyword.arg is None for keyword in call.keywords):
        return None
    local = {**_literal_defaults(function), **_single_assignments(function)}
    passed = {keyword.arg: keyword.value for keyword in call.keywords}
    return {
        name: keyword_value(
            _returned_call(local.get(ast.unparse(value), value), tester_method), tester_attribute
        )
        for name, value in {**passed, **later}.items()
    }


def _returned_call(node: ast.expr, tester_method: Callable[[str], ast.FunctionDef | None]) -> ast.expr:
    """``self.get_backbone_config()`` -> the ``XConfig(...)`` call that method's one statement returns
    (a class named by a plain name); any other value as it is."""
    if not (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and isinstance(node.func, ast.Attribute)
        and ast.unparse(node.func.value) == "self"
    ):
        return node
    method = tester_method(node.func.attr)
    body = [statement for statement in method.body if not _is_docstring(statement)] if method else []
    if (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and isinstance(body[0].value, ast.Call)
        and isinstance(body[0].value.func, ast.Name)
    ):
        return body[0].value
    return node


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _built_then_set(function: ast.FunctionDef) -> tuple[ast.Call, dict[str, ast.expr]] | None:
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


def _literal_defaults(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """Parameters with a literal default, read as that default: the scanner calls ``get_config()``
    without arguments, and a call with other values leaves the configuration unknown
    (``tester_expressions``)."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [
        *zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True),
        *((item, default) for item, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)),
    ]
    return {item.arg: default for item, default in pairs if isinstance(default, ast.Constant)}


def _single_assignments(function: ast.FunctionDef) -> dict[str, ast.expr]:
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


def keyword_value(node: ast.expr, tester_attribute: Callable[[str], object]) -> object:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        value = tester_attribute(node.attr)
        return Unknown(node.attr, exists=True) if value is ABSENT else value
    if isinstance(node, ast.Dict) and all(
        isinstance(key, ast.Constant) and isinstance(key.value, str) for key in node.keys
    ):  # a part's dict ({"model_type": "bart", "vocab_size": self.vocab_size}): item by item
        return {
            key.value: keyword_value(item, tester_attribute)
            for key, item in zip(node.keys, node.values, strict=True)
        }
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return Unknown(ast.unparse(node), exists=True)
