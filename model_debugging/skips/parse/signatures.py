"""A function definition's parameters as a call binds them, read once from its ``ast`` node."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    """``positional``: in order, after the receiver (``self``) of a method; ``defaults``: the
    positional and keyword-only parameters that have one; ``varargs`` / ``kwargs``: the names of
    ``*args`` / ``**kwargs``."""

    receiver: str | None
    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]
    defaults: Mapping[str, ast.expr]
    varargs: str | None
    kwargs: str | None

    @property
    def names(self) -> tuple[str, ...]:
        """Every parameter a keyword may name, positional ones first."""
        return (*self.positional, *self.keyword_only)


def signature(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool = True) -> Signature:
    """The parameters of ``function``; with ``method``, its first one is the receiver. Kept on the
    node: a helper is bound again for every test class that calls it."""
    kept = function.__dict__.setdefault("_signatures", {})
    if method not in kept:
        arguments = function.args
        positional = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]
        defaults = dict(
            zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True)
        )
        defaults.update(
            (argument.arg, default)
            for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            if default is not None
        )
        receiver = positional.pop(0) if method and positional else None
        kept[method] = Signature(
            receiver,
            tuple(positional),
            tuple(argument.arg for argument in arguments.kwonlyargs),
            defaults,
            arguments.vararg.arg if arguments.vararg is not None else None,
            arguments.kwarg.arg if arguments.kwarg is not None else None,
        )
    return kept[method]
