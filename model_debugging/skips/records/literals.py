"""What a value written in a source is, as read without running it: a literal, or not one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class NonLiteral:
    """A value that is not a literal (a call, a name, an expression); ``code`` is its source text.

    Test files and library files alike: its value is known only when something runs it."""

    code: str


# What a literal in the source evaluates to; anything else is a NonLiteral.
LiteralValue = Union[str, bytes, int, float, bool, None, tuple, list, dict, NonLiteral]  # noqa: UP007
