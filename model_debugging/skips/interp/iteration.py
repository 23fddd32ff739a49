"""The items a ``for`` loop or a comprehension goes through when the interpreter knows them, and a
``for`` over such items run as Python runs it."""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.outcome import Exit

MAX_ITERATIONS = 256  # a loop over more known items is left to the run
ITERABLE = (list, tuple, range, str, dict, set, frozenset)


def loop_items(value: object) -> list[object] | None:
    """The items of ``value`` in Python's order (a dict's keys), or None when it is not a known
    iterable or holds more than :data:`MAX_ITERATIONS` items."""
    if not isinstance(value, ITERABLE) or len(value) > MAX_ITERATIONS:
        return None
    return list(value)


def run_loop(
    node: ast.For,
    items: list[object],
    bind: Callable[[object], None],
    block: Callable[[list[ast.stmt]], None],
) -> None:
    """``node`` run over known ``items`` as Python runs it: each item bound (``bind``) before the
    body runs (``block``), ``break`` leaving the loop, ``continue`` going on, ``else`` run when no
    ``break`` left it; any other way out (``return``) is raised on."""
    for item in items:
        bind(item)
        try:
            block(node.body)
        except Exit as leaving:
            if leaving.kind == "break":
                return
            if leaving.kind != "continue":
                raise
    block(node.orelse)
