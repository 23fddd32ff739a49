"""A test overridden by a body that does nothing: the model opts out, saying why in a comment."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from model_debugging.skips.parse.rules.base import Context, Rule, register
from model_debugging.skips.parse.rules.nodes import NOOP_REASON, reason_of
from model_debugging.skips.records.test_files import Skip, SkipKind


def _is_noop_statement(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Pass):
            continue
        if isinstance(small, cst.Return) and small.value is None:
            continue
        if isinstance(small, cst.Expr) and isinstance(
            small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)
        ):
            continue
        return False
    return True


def _comments(lines: Sequence[cst.EmptyLine]) -> list[str]:
    return [line.comment.value.lstrip("#").strip() for line in lines if line.comment is not None]


def _body_comments(block: cst.IndentedBlock, statements: Sequence[cst.BaseStatement]) -> list[str]:
    comments = []
    if block.header.comment is not None:
        comments.append(block.header.comment.value.lstrip("#").strip())
    for statement in statements:
        comments += _comments(statement.leading_lines)
        trailing = statement.trailing_whitespace.comment
        if trailing is not None:
            comments.append(trailing.value.lstrip("#").strip())
    return comments + _comments(block.footer)


def _reason(function: cst.FunctionDef, statements: Sequence[cst.BaseStatement]) -> str:
    """The docstring, else comments in the body, else above the ``def``, else a decorator's ``reason``."""
    docstring = function.get_docstring(clean=True)
    if docstring:
        return " ".join(docstring.split())
    block = function.body
    comments = _body_comments(block, statements) if isinstance(block, cst.IndentedBlock) else []
    if not comments:
        above = list(function.leading_lines)
        for decorator in function.decorators:
            above += list(decorator.leading_lines)
        comments = _comments(above)
    comments = [text for text in comments if text]
    if not comments:  # e.g. @pytest.mark.xfail(reason="...") over a `pass`
        calls = [decorator.decorator for decorator in function.decorators]
        comments = [reason_of(call.args) or "" for call in calls if isinstance(call, cst.Call)][:1]
        comments = [text for text in comments if text]
    return " ".join(comments) if comments else NOOP_REASON


@register
class NoopOverride(Rule):
    """A body of only ``pass`` / docstring / ``...`` / bare ``return``: the test does nothing."""

    INVALID = (
        "def test_x(self):\n    pass",
        'def test_x(self):\n    """Not supported."""',
        "# Not supported\ndef test_x(self):\n    return",
        "def test_x(self): ...",
    )
    VALID = ("def test_x(self):\n    run()", "def test_x(self):\n    x = 1")

    @staticmethod
    def check(node: cst.FunctionDef, context: Context) -> Skip | None:
        block = node.body
        if isinstance(block, cst.IndentedBlock):
            statements = list(block.body)
        else:
            statements = [cst.SimpleStatementLine(body=list(block.body))]
        if not statements or not all(_is_noop_statement(statement) for statement in statements):
            return None
        return Skip(SkipKind.NOOP_OVERRIDE, _reason(node, statements), context.line)
