"""What a call does to the dicts, lists and sets it is handed, as far as the interpreter can tell.

The interpreter's values are not shared objects: a change made through one name is made by binding
a new value. So a call that could change in place what it is handed must say so to its caller:
one nothing models may have changed it (unknown after it); a helper the interpreter runs hands
back what its parameter holds at its end when that is certain, else the caller's value is unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.effects import changed_parameters, passed_names
from model_debugging.skips.interp.values import CHANGEABLE, Unknown
from model_debugging.skips.parse.signatures import signature

# The values the helper just run ended with in the parameters it may change, where they are
# certain (None: nothing certain, or no helper was run).
HandedBack = Callable[[], dict[str, object] | None]


def forget_passed(call: ast.Call, variables: dict[str, object]) -> None:
    """What ``call`` is handed that it can change in place (a dict, list or set) becomes unknown in
    every variable holding it."""
    for name in passed_names(call):
        _replace(name, variables, None)


def after_helper(
    call: ast.Call,
    find: Callable[[str], ast.FunctionDef | None] | None,
    name: str,
    variables: dict[str, object],
    handed_back: HandedBack | None,
    method: bool = True,
) -> None:
    """After a helper ran (or was not followed): an argument its definition may change (any, when
    the definition cannot be read) takes the value the helper handed back for it, else is unknown.
    ``method``: ``self`` is not among ``call``'s arguments."""
    definition = find(name) if find is not None else None
    if definition is None or any(isinstance(argument, ast.Starred) for argument in call.args):
        forget_passed(call, variables)  # which parameter takes what is known only at run time
        return
    changed = changed_parameters(definition)
    if not changed:
        return
    final = handed_back() if handed_back is not None else None
    for parameter, argument in _parameters_of(definition, call, method):
        if parameter in changed and isinstance(argument, ast.Name):
            _replace(argument.id, variables, None if final is None else final.get(parameter))


def handed_back(
    function: ast.FunctionDef, variables: dict[str, object], relevant: frozenset[str]
) -> dict[str, object]:
    """What ``function``'s parameters that it may change hold at its end (``variables``), for those
    whose changes were run (``relevant``: the statements that change them were not skipped)."""
    return {name: variables[name] for name in changed_parameters(function) & relevant if name in variables}


def _parameters_of(
    definition: ast.FunctionDef, call: ast.Call, method: bool
) -> list[tuple[str | None, ast.expr]]:
    """(the parameter that takes it, argument) for each argument of ``call`` but ``self``."""
    found = signature(definition)  # positional parameters after ``self``
    positional, named = found.positional, set(found.names)
    return [
        (positional[index] if index < len(positional) else found.varargs, argument)
        for index, argument in enumerate(call.args if method else call.args[1:])
    ] + [(keyword.arg if keyword.arg in named else found.kwargs, keyword.value) for keyword in call.keywords]


def _replace(name: str, variables: dict[str, object], value: object | None) -> None:
    """The dict, list or set ``name`` holds becomes ``value`` (None: unknown) in every variable
    holding it."""
    held = variables.get(name)
    if isinstance(held, CHANGEABLE):
        for other, current in list(variables.items()):
            if current is held:
                variables[other] = Unknown(other) if value is None else value
