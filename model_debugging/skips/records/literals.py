"""What a value written in a source is, as read without running it: a literal, or not one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class NonLiteral:
    """A value that is not a literal (a call, a name, an expression); ``code`` is its source text.

    Test files and library files alike: its value is known only when something runs it."""

    code: str


UNEVALUATED = "<unevaluated: "


def unevaluated(code: str) -> str:
    """How a skip reason shows a part its reader could not evaluate (``<unevaluated: code>``); the
    class-dependent ones are filled in per test class (``decide/reasons.py``)."""
    return f"{UNEVALUATED}{code}>"


# What a literal in the source evaluates to; anything else is a NonLiteral.
LiteralValue = Union[str, bytes, int, float, bool, None, tuple, list, dict, NonLiteral]  # noqa: UP007
