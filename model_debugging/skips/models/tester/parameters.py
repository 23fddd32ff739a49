"""Binding the parameters of a model tester's methods, read by :mod:`~model_debugging.skips.models.tester.reader`.

A call the reader follows binds the values passed, else the literal defaults; a call the method
does not accept, or missing a required argument, is a path the reader gives up on (:class:`GiveUp`).
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import Unknown
from model_debugging.skips.parse.signatures import signature


class GiveUp(Exception):  # noqa: N818 - control flow
    """The method takes a path the reader cannot follow (``fails``: it surely raises)."""

    def __init__(self, fails: bool = False):
        super().__init__("give up")
        self.fails = fails


def read_names(function: ast.FunctionDef) -> set[str]:
    """The names ``function``'s body reads (all of its parameters when it calls ``locals()`` / ``vars()``)."""
    names = {
        node.id
        for statement in function.body
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    if names & {"locals", "vars"}:
        return {item.arg for item in ast.walk(function.args) if isinstance(item, ast.arg)}
    return names


def named_parameters(function: ast.FunctionDef, values: dict[str, object]) -> dict[str, object]:
    """The items of ``values`` that name a parameter passable by keyword (not ``*args`` / ``**kwargs``)."""
    names = {item.arg for item in (*function.args.args, *function.args.kwonlyargs)}
    return {name: value for name, value in values.items() if name in names}


def bind_parameters(
    function: ast.FunctionDef, arguments: list[object], keywords: dict[str, object], method: bool
) -> dict[str, object]:
    """The parameters of a tester method (``method``) or function: passed values, else literal
    defaults, else unknown."""
    found = signature(function, method)
    if len(arguments) > len(found.positional) or not set(keywords) <= set(found.names):
        raise GiveUp  # a call the method does not accept (or takes through **kwargs)
    variables: dict[str, object] = {}
    for index, name in enumerate(found.names):
        if index < len(arguments):
            variables[name] = arguments[index]
        elif name in keywords:
            variables[name] = keywords[name]
        elif name in found.defaults:
            try:
                variables[name] = ast.literal_eval(found.defaults[name])
            except (ValueError, TypeError, SyntaxError):
                variables[name] = Unknown(name)
        else:
            raise GiveUp  # a required argument missing: the call fails
    for extra in (found.varargs, found.kwargs):
        if extra is not None:
            variables[extra] = Unknown(extra)
    return variables
