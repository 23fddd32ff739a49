"""Binding the parameters of a model tester's methods, read by :mod:`~model_debugging.skips.models.tester.reader`.

A call the reader follows binds the values passed, else the literal defaults; a call the method
does not accept, or missing a required argument, is a path the reader gives up on (:class:`GiveUp`).
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import Unknown


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
    positional = [item.arg for item in (*function.args.posonlyargs, *function.args.args)][int(method) :]
    defaults = dict(
        zip(positional[len(positional) - len(function.args.defaults) :], function.args.defaults, strict=True)
    )
    defaults.update(
        (item.arg, default)
        for item, default in zip(function.args.kwonlyargs, function.args.kw_defaults, strict=True)
        if default
    )
    variables: dict[str, object] = {}
    names = [*positional, *(item.arg for item in function.args.kwonlyargs)]
    if len(arguments) > len(positional) or not set(keywords) <= set(names):
        raise GiveUp  # a call the method does not accept (or takes through **kwargs)
    for index, name in enumerate(names):
        if index < len(arguments) and name in positional:
            variables[name] = arguments[index]
        elif name in keywords:
            variables[name] = keywords[name]
        elif name in defaults:
            try:
                variables[name] = ast.literal_eval(defaults[name])
            except (ValueError, TypeError, SyntaxError):
                variables[name] = Unknown(name)
        else:
            raise GiveUp  # a required argument missing: the call fails
    for extra in (function.args.vararg, function.args.kwarg):
        if extra is not None:
            variables[extra.arg] = Unknown(extra.arg)
    return variables
