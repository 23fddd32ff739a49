"""How a test's run ends for the interpreter: its verdict, and the signals that change the run's course.

A run reaches a skip (:class:`SkipSignal`), a condition only the run decides on the way to one
(:class:`Undecided`, with the variables it had there, to name the unknown value), or an end
(:class:`Exit`: ``return``, ``raise``, ``break``, ``continue``); :class:`RuntimeVerdict` is what
the decision floor reads.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.interp.unknowns import explain
from model_debugging.skips.interp.values import Signal, Skipped


@dataclass(frozen=True)
class RuntimeVerdict:
    """What the test does for one test class: ``condition`` says where it is undecided, ``unknown``
    which value only the run knows there (empty when the doubt is no value: a call not followed)."""

    status: Literal["ran", "skipped", "undecided"]
    reason: str = ""
    line: int = 0
    condition: str = ""
    unknown: str = ""
    raised: bool = False  # it ran and ended by an exception (the test fails), not by reaching its end


@dataclass(frozen=True)
class Doubt:
    """A condition only the run decides, with the variables the test had when it met it."""

    condition: ast.AST | str
    variables: dict[str, object] | None = None


class Undecided(Signal):
    def __init__(self, doubt: Doubt):
        super().__init__("undecided")
        self.doubt = doubt

    def text(self) -> str:
        condition = self.doubt.condition
        return condition if isinstance(condition, str) else describe(condition)

    def unknown(self, evaluate: Callable[[ast.expr, dict[str, object]], object], handlers: Handlers) -> str:
        """Which value of the condition only the run knows (see ``unknowns.explain``)."""
        condition, variables = self.doubt.condition, self.doubt.variables
        if isinstance(condition, str) or variables is None:
            return ""
        return explain(evaluate, condition, variables, handlers)


class SkipSignal(Signal):
    def __init__(self, skipped: Skipped):
        super().__init__(skipped.reason)
        self.skipped = skipped


class Exit(Signal):
    """``return`` / ``raise`` (the test ends, as run) or ``break`` / ``continue`` (``kind``)."""

    def __init__(self, kind: str, value: object = None):
        super().__init__(kind)
        self.kind, self.value = kind, value


def describe(node: ast.AST) -> str:
    """The condition a verdict names: an ``if``'s test, a loop's header, a statement's first line."""
    if isinstance(node, ast.For):
        return f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}"
    if isinstance(node, ast.While):
        return f"while {ast.unparse(node.test)}"
    return ast.unparse(node).splitlines()[0]
