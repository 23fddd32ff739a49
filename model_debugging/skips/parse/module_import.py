"""What pytest meets when it imports a test file, before it collects anything from it.

- ``pytest.skip("r", allow_module_level=True)`` or ``raise unittest.SkipTest("r")`` at the top
  level skips the whole module: pytest reports one skip for the file and collects none of its
  tests (kind ``module``). Written under an ``if`` or in a ``try`` it may or may not: a condition.
- ``pytest.skip("r")`` without ``allow_module_level=True`` there is an error, and so is a class
  listing the same base twice (``TypeError: duplicate base class``): pytest collects nothing from
  the file and reports the error.

The first of these in the file's order decides; nothing after it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from model_debugging.skips.parse.rules import Context
from model_debugging.skips.parse.rules.nodes import SKIP_CALLS, canonical, code, dotted_name, literal_value
from model_debugging.skips.parse.rules.reach import holds_skip, skip_statement
from model_debugging.skips.records.test_files import CANNOT_IMPORT, Condition, ParseError, Skip, SkipKind


def first_line(statement: cst.CSTNode) -> str:
    """The first line of a statement's own text (without the comments and blank lines above it)."""
    if hasattr(statement, "leading_lines"):
        statement = statement.with_changes(leading_lines=())
    return code(statement).splitlines()[0]


def _allowed_module_skip(statement: cst.SimpleStatementLine, context: Context) -> bool:
    """A ``pytest.skip(...)`` statement passing ``allow_module_level=True`` (``raise SkipTest`` needs none)."""
    small = statement.body[0]
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return True
    if canonical(dotted_name(small.value.func), context.aliases) not in SKIP_CALLS:
        return True
    return any(
        arg.keyword is not None
        and arg.keyword.value == "allow_module_level"
        and literal_value(arg.value) is True
        for arg in small.value.args
    )


def _duplicate_base(node: cst.ClassDef) -> str | None:
    seen = set()
    for arg in node.bases:
        name = dotted_name(arg.value)
        if name is not None and name in seen:
            return name
        seen.add(name)
    return None


def _classes(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.ClassDef]:
    """The classes the statements define, also in the blocks of an ``if`` or a ``try``."""
    for statement in statements:
        if isinstance(statement, cst.ClassDef):
            yield statement
        elif isinstance(statement, (cst.If, cst.Try)) and isinstance(statement.body, cst.IndentedBlock):
            yield from _classes(statement.body.body)


def import_outcome(
    body: Sequence[cst.BaseStatement], context: Context, path: str, line_of: Callable[[cst.CSTNode], int]
) -> tuple[Skip | None, ParseError | None, tuple[Condition, ...]]:
    """``(skip, error, conditions)`` of importing the module whose top-level statements are ``body``;
    ``line_of`` gives the line of one of them (or of a class)."""
    conditions = []
    stop = len(body)
    for index, statement in enumerate(body):
        reason = skip_statement(statement, context.aliases)
        if reason is not None:
            stop = index
            break
        if not isinstance(statement, (cst.SimpleStatementLine, cst.ClassDef, cst.FunctionDef)) and holds_skip(
            statement, context.aliases
        ):
            header = first_line(statement).rstrip(":")
            conditions.append(Condition(f"{header}: the module may skip itself", line_of(statement)))
    for node in _classes(body[:stop]):
        duplicate = _duplicate_base(node)
        if duplicate is not None:
            message = f"{CANNOT_IMPORT}duplicate base class {duplicate} in class {node.name.value}"
            return None, ParseError(path, line_of(node), message), tuple(conditions)
    if stop == len(body):
        return None, None, tuple(conditions)
    statement = body[stop]
    if not _allowed_module_skip(statement, context):
        message = f"{CANNOT_IMPORT}pytest.skip outside a test without allow_module_level=True"
        return None, ParseError(path, line_of(statement), message), tuple(conditions)
    return Skip(SkipKind.MODULE, reason, line_of(statement)), None, tuple(conditions)
