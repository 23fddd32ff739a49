"""The variables a function starts with when the interpreter calls it: its parameters bound to
the arguments given, the others to their defaults."""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.values import Unknown
from model_debugging.skips.parse.signatures import signature

MAX_DEPTH = 6  # nested calls a runner follows (the test's helpers, the tester's, the constructors')


def bind_parameters(
    function: ast.FunctionDef,
    arguments: list[object],
    keywords: dict[str, object],
    evaluate: Callable[[ast.expr, dict[str, object]], object],
) -> dict[str, object]:
    """``function``'s parameters after ``self``: the ``arguments`` and ``keywords`` a call gives,
    else the default (``evaluate``-d with no variables), else unknown; ``*args`` and ``**kwargs``
    are unknown."""
    found = signature(function)
    variables: dict[str, object] = {}
    for index, name in enumerate(found.names):
        if index < len(arguments) and index < len(found.positional):
            variables[name] = arguments[index]
        elif name in keywords:
            variables[name] = keywords[name]
        else:
            default = found.defaults.get(name)
            variables[name] = evaluate(default, {}) if default is not None else Unknown(name)
    for extra in (found.varargs, found.kwargs):
        if extra is not None:
            variables[extra] = Unknown(extra)
    return variables
