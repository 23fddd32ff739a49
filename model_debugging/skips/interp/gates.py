"""Whether the runner must run a statement, as far as its syntax says: read once per statement.

The runner leaves out what cannot decide a skip (see :mod:`~model_debugging.skips.interp.effects`).
That depends on the statement's effects and on the names its function's skips read (the frame's
``relevant`` and ``watched``, fixed per function), so it is kept on the node; what is left to the
run is whether a call in it is handed a container one of those names holds (:func:`hands_changeable`).
"""

from __future__ import annotations

import ast
from typing import Literal, NamedTuple

from model_debugging.skips.interp.effects import effects, mutated_name
from model_debugging.skips.interp.values import CHANGEABLE

_BLOCKS = frozenset({ast.For, ast.While, ast.With, ast.Try, ast.If})
_ASSIGNMENTS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign})
GATED = _BLOCKS | _ASSIGNMENTS | {ast.Expr}  # the statements a gate is kept for


class Gate(NamedTuple):
    """``run``: ``always``; ``never`` (``same = options`` with neither name watched); ``mutated``
    (``name.append(x)`` on a relevant ``name``: its new value is computed, ``name``); ``if_handed``
    (only when a call is handed a container one of ``passed`` holds, else its effects are applied
    for a block or an ``if``, nothing is done for another statement). ``passed``: the watched names
    it hands to calls."""

    run: Literal["always", "never", "mutated", "if_handed"]
    passed: frozenset[str] = frozenset()
    name: str = ""


def gate(node: ast.stmt, relevant: frozenset[str], watched: frozenset[str], helpers: frozenset[str]) -> Gate:
    """The gate of ``node`` (one of :data:`GATED`) in its function, whose frame has ``relevant`` and
    ``watched`` (``helpers``: the methods that may skip)."""
    found = getattr(node, "_skip_gate", None)
    if found is None:
        found = node._skip_gate = _gate(node, relevant, watched, helpers)  # type: ignore[attr-defined]
    return found


def _gate(node: ast.stmt, relevant: frozenset[str], watched: frozenset[str], helpers: frozenset[str]) -> Gate:
    found = effects(node, helpers)
    passed = found.passed & watched
    kind = type(node)
    if kind in _BLOCKS:  # neither skips nor assigns a relevant variable: inert unless handed one
        return Gate("always" if found.may_skip or found.names & relevant else "if_handed", passed)
    if kind is ast.Expr:
        if found.may_skip:
            return Gate("always", passed)
        changed = mutated_name(node.value) if isinstance(node.value, ast.Call) else None
        if changed is not None and changed in relevant:
            return Gate("mutated", passed, changed)
        return Gate("if_handed", passed)  # a call handed a container that decides a skip may change it
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):  # same = options
        return Gate("never" if found.changed.isdisjoint(watched) else "always", passed)
    return Gate("if_handed" if found.changed.isdisjoint(relevant) else "always", passed)


def hands_changeable(passed: frozenset[str], variables: dict[str, object]) -> bool:
    """A call in the statement is handed a dict, list or set a variable of ``passed`` holds: it may
    change it in place."""
    return any(isinstance(variables.get(name), CHANGEABLE) for name in passed)
