"""What a class's ``__init__`` leaves on ``self`` when called with only its required arguments,
read from Python's own tree of the file.

A model tester's constructor is a large part of a test file, and this is all the scanner reads of
it: reading it here lets ``parse/elide.py`` blank its body before libcst parses the file. Read are
parameter defaults assigned to ``self.x``, ``self.x = literal``, ``kwargs.setdefault("x", value)``
and the keywords of ``super().__init__(x=...)``, in the statements ``__init__`` always reaches (its
top level, the first branch of an ``if``, the body of a ``try``). Values are what
:func:`~model_debugging.skips.parse.rules.nodes.literal_value` makes of libcst's nodes; a value
that is not a literal keeps the code libcst writes for its node: its source text with the
parentheses written around it, and, on the lines it continues inside brackets, without the
indentation of the block its statement is in.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator

from model_debugging.skips.parse.ast_nodes import self_attribute
from model_debugging.skips.parse.source_lines import Position, column, python_lines, text_between, text_of
from model_debugging.skips.records.literals import LiteralValue, NonLiteral

_NOT_LITERAL = object()
Function = ast.FunctionDef | ast.AsyncFunctionDef


class _Source:
    """A file's text, split into lines when the code of a value is first asked for."""

    def __init__(self, text: str):
        self.text = text
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = python_lines(self.text)
        return self._lines

    def starts_block(self, body: list[ast.stmt]) -> bool:
        """Whether ``body`` is an indented block (not statements after the header's colon)."""
        first = body[0]
        line = self.lines[first.lineno - 1]
        previous = self.lines[first.lineno - 2].rstrip("\r\n") if first.lineno > 1 else ""
        continued = previous.endswith("\\") and "#" not in previous  # ``if x: \`` then the statement
        return not line[: column(line, first.col_offset)].strip() and not continued

    def literal(self, node: ast.expr, after: Position, statement: int) -> LiteralValue:
        """``node``'s value, or a :class:`NonLiteral` with its code; ``after``: a position after
        the code before it and before its opening parentheses; ``statement``: the first line of its
        statement."""
        value = _value(node)
        return NonLiteral(self._code(node, after, statement)) if value is _NOT_LITERAL else value

    def _code(self, node: ast.expr, after: Position, statement: int) -> str:
        lines = self.lines
        before = text_between(lines, after, (node.lineno, node.col_offset))
        opening, start = _opening_parentheses(before)
        text = before[start:] + text_of(lines, node)
        line, at = node.end_lineno - 1, column(lines[node.end_lineno - 1], node.end_col_offset)
        while opening:  # the closing parentheses follow, between blanks and comments
            char = lines[line][at] if at < len(lines[line]) else "\n"
            if char == "\n" or char == "#":
                text += lines[line][at:]
                line, at = line + 1, 0
                continue
            text += char
            at += 1
            if char == ")":
                opening -= 1
        first = lines[statement - 1]
        return _without_block_indent(text, first[: len(first) - len(first.lstrip(" \t\f"))])


def _opening_parentheses(text: str) -> tuple[int, int]:
    """How many ``(`` end ``text`` (code without strings), blanks, comments and continuations aside,
    and where the first of them is."""
    count, index, start = 0, 0, len(text)
    while index < len(text):
        char = text[index]
        if char == "#":
            index = text.find("\n", index)
            if index < 0:
                break
        elif char == "(":
            start = index if count == 0 else start
            count += 1
        elif not char.isspace() and char != "\\":
            count, start = 0, len(text)
        index += 1
    return count, start


def _without_block_indent(text: str, indent: str) -> str:
    """``text`` with ``indent`` taken off the lines it continues inside brackets (as libcst writes
    a node on its own); lines inside strings and after a ``\\`` stay as they are."""
    if "\n" not in text or not indent:
        return text
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    in_brackets = {token.start[0] for token in tokens if token.type == tokenize.NL}
    lines = text.split("\n")
    return "\n".join(
        line[len(indent) :] if number in in_brackets and line.startswith(indent) else line
        for number, line in enumerate(lines)
    )


def _value(node: ast.expr) -> object:
    """The value :func:`~model_debugging.skips.parse.rules.nodes.literal_value` gives the same
    code, or ``_NOT_LITERAL``."""
    if isinstance(node, ast.Constant):
        return _NOT_LITERAL if isinstance(node.value, complex) or node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        inner = _value(node.operand)
        if isinstance(node.op, ast.USub) and isinstance(inner, int | float) and not isinstance(inner, bool):
            return -inner
        if isinstance(node.op, ast.Not) and inner is not _NOT_LITERAL:
            return not inner
        return _NOT_LITERAL
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = [_value(item.value if isinstance(item, ast.Starred) else item) for item in node.elts]
        if any(item is _NOT_LITERAL for item in items):
            return _NOT_LITERAL
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict) and not node.keys:
        return {}
    return _NOT_LITERAL


def _reached(body: list[ast.stmt], source: _Source) -> Iterator[ast.stmt]:
    """The statements of a block, descending into the first branch of ``if`` and into ``try``."""
    if not body or not source.starts_block(body):
        return
    for statement in body:
        if isinstance(statement, ast.If | ast.Try):
            yield from _reached(statement.body, source)
        else:
            yield statement


def _parameter_defaults(function: Function, source: _Source) -> dict[str, LiteralValue]:
    """Defaults of the parameters that may be passed by keyword (not positional-only ones)."""
    arguments = function.args
    first = len(arguments.posonlyargs) + len(arguments.args) - len(arguments.defaults)
    pairs = [
        (argument, arguments.defaults[index - first])
        for index, argument in enumerate(arguments.args, len(arguments.posonlyargs))
        if index >= first
    ]
    pairs += [
        (argument, default)
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    ]
    return {
        argument.arg: source.literal(default, (argument.end_lineno, argument.end_col_offset), function.lineno)
        for argument, default in pairs
    }


def _arguments(call: ast.Call) -> list[ast.expr | ast.keyword]:
    """The arguments of ``call`` in the order they are written."""
    return sorted([*call.args, *call.keywords], key=lambda node: (node.lineno, node.col_offset))


def _argument_value(argument: ast.expr | ast.keyword) -> ast.expr:
    """The expression passed: that of a keyword, and ``x`` of ``*x`` and ``**x``."""
    return argument.value if isinstance(argument, ast.keyword | ast.Starred) else argument


def init_defaults(function: Function, text: str) -> tuple[tuple[str, LiteralValue], ...]:
    """What ``__init__`` (``function``, of the source ``text``) leaves on ``self`` when called with
    no arguments but the required ones, in the order first set."""
    source = _Source(text)
    defaults = _parameter_defaults(function, source)

    def value(node: ast.expr, after: Position, statement: int) -> LiteralValue:
        if isinstance(node, ast.Name) and node.id in defaults:
            return defaults[node.id]
        return source.literal(node, after, statement)

    found: dict[str, LiteralValue] = {}
    for statement in _reached(function.body, source):
        if isinstance(statement, ast.Assign):
            last = statement.targets[-1]
            for target in statement.targets:
                if (name := self_attribute(target)) is not None:
                    found[name] = value(
                        statement.value, (last.end_lineno, last.end_col_offset), statement.lineno
                    )
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            continue
        call = statement.value
        callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        arguments = _arguments(call)
        if callee == "setdefault" and len(arguments) == 2:
            key, default = (_argument_value(argument) for argument in arguments)
            if isinstance(key := _value(key), str):
                after = (arguments[0].end_lineno, arguments[0].end_col_offset)
                found.setdefault(key, source.literal(default, after, statement.lineno))
        elif callee == "__init__":  # super().__init__(parent, is_training=False, x=x)
            for keyword in call.keywords:
                if keyword.arg is not None:
                    after = (keyword.lineno, keyword.col_offset)
                    found.setdefault(keyword.arg, value(keyword.value, after, statement.lineno))
    return tuple(found.items())


def class_init_defaults(node: ast.ClassDef, text: str) -> tuple[tuple[str, LiteralValue], ...]:
    """:func:`init_defaults` of the last ``__init__`` of the class (``if`` and ``try`` blocks included)."""
    found = None
    for statement in _class_statements(node.body):
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and statement.name == "__init__":
            found = statement
    return () if found is None else init_defaults(found, text)


def _class_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in body:
        if isinstance(statement, ast.If | ast.Try):
            yield from _class_statements(statement.body)
        else:
            yield statement
