"""What ``a, *rest, b = value`` binds each target to, shared by every runner of statements."""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import Unknown


def unpacked(targets: list[ast.expr], value: object) -> list[object] | None:
    """The value each of ``targets`` gets from a known tuple or list, as Python unpacks it (a starred
    target takes a list of the items the others leave); None when ``value`` is not a known tuple or
    list of a length that fits."""
    if not isinstance(value, (tuple, list)):
        return None
    items = list(value)
    starred = [index for index, target in enumerate(targets) if isinstance(target, ast.Starred)]
    if not starred:
        return items if len(items) == len(targets) else None
    if len(starred) > 1 or len(items) < len(targets) - 1:
        return None
    at, end = starred[0], len(items) - (len(targets) - starred[0] - 1)
    return [*items[:at], items[at:end], *items[end:]]


def bindings(target: ast.Tuple | ast.List, value: object) -> list[tuple[ast.expr, object]]:
    """Each target of ``target`` (a starred one as the target it stars) with the value it is bound
    to: unknown for every one when :func:`unpacked` cannot tell."""
    items = unpacked(target.elts, value)
    if items is None:
        items = [Unknown(node=element) for element in target.elts]
    return [
        (element.value if isinstance(element, ast.Starred) else element, item)
        for element, item in zip(target.elts, items, strict=True)
    ]
