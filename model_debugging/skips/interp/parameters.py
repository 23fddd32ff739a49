"""The variables a function starts with when the interpreter calls it: its parameters bound to
the arguments given, the others to their defaults."""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.values import Unknown


def bind_parameters(
    function: ast.FunctionDef,
    arguments: list[object],
    keywords: dict[str, object],
    evaluate: Callable[[ast.expr, dict[str, object]], object],
) -> dict[str, object]:
    """``function``'s parameters after ``self``: the ``arguments`` and ``keywords`` a call gives,
    else the default (``evaluate``-d with no variables), else unknown; ``*args`` and ``**kwargs``
    are unknown."""
    names, defaults = positional_parameters(function)
    variables: dict[str, object] = {}
    for index, name in enumerate(names):
        if index < len(arguments):
            variables[name] = arguments[index]
        elif name in keywords:
            variables[name] = keywords[name]
        else:
            default = defaults.get(name)
            variables[name] = evaluate(default, {}) if default is not None else Unknown(name)
    for argument in function.args.kwonlyargs:
        variables[argument.arg] = keywords.get(argument.arg, Unknown(argument.arg))
    for extra in (function.args.vararg, function.args.kwarg):
        if extra is not None:
            variables[extra.arg] = Unknown(extra.arg)
    return variables


def positional_parameters(function: ast.FunctionDef) -> tuple[list[str], dict[str, ast.expr]]:
    """The positional parameters after ``self`` and their defaults, kept on the node (a common
    helper is called for every test class)."""
    found = getattr(function, "_positional_parameters", None)
    if found is None:
        names = [argument.arg for argument in (*function.args.posonlyargs, *function.args.args)][1:]
        defaults = dict(
            zip(names[len(names) - len(function.args.defaults) :], function.args.defaults, strict=False)
        )
        found = function._positional_parameters = (names, defaults)  # type: ignore[attr-defined]
    return found
