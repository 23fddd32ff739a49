"""What a rule is: one skip pattern, with the source it must flag and the source it must not.

In the style of Fixit's rules, each rule carries its examples: ``INVALID`` snippets are test
methods it must flag (find a skip, a condition, a guard, a call), ``VALID`` ones it must leave alone.
``tests/skips/parse/test_rules.py`` runs every example of every rule in :data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from model_debugging.skips.parse.rules.nodes import NO_NAMES


@dataclass(frozen=True)
class Context:
    """What a rule knows besides the node: the file's import aliases, the definition's line, and
    the names the module binds once (see ``parse/module_names.py``)."""

    aliases: Mapping[str, str]
    line: int
    names: Mapping[str, cst.BaseExpression] = field(default_factory=lambda: NO_NAMES)


class Rule:
    """A skip pattern over a test method (or a class, for decorator rules).

    ``check`` returns what it found (a record, or a non-empty tuple of records) or None / ``()``.
    """

    VALID: ClassVar[tuple[str, ...]] = ()  # snippets it must not flag
    INVALID: ClassVar[tuple[str, ...]] = ()  # snippets it must flag

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> object:
        raise NotImplementedError


RULES: list[type[Rule]] = []


def register(rule: type[Rule]) -> type[Rule]:
    """Add ``rule`` to :data:`RULES` (whose examples the test suite runs)."""
    RULES.append(rule)
    return rule


def body_of(function: cst.FunctionDef) -> tuple[cst.BaseStatement, ...]:
    """The statements of an indented body (none for ``def f(): pass`` written on one line)."""
    return tuple(function.body.body) if isinstance(function.body, cst.IndentedBlock) else ()
