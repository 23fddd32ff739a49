"""The text of ``ast`` nodes, found from their positions in the source."""

from __future__ import annotations

import ast
import re

Position = tuple[int, int]  # ``ast``'s line (from 1) and column (in UTF-8 bytes)


def python_lines(source: str) -> list[str]:
    """Lines as the parser splits them (``\\r\\n``, ``\\r`` or ``\\n``), ends kept: what
    ``ast.get_source_segment`` splits the whole source into at every call."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", source)


def column(line: str, offset: int) -> int:
    """The index in ``line`` of ``ast``'s column ``offset`` (which counts UTF-8 bytes)."""
    return offset if line.isascii() else len(line.encode()[:offset].decode())


def text_of(lines: list[str], node: ast.AST) -> str:
    """The source text of ``node``, from its first character to its last."""
    return text_between(lines, (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))


def text_between(lines: list[str], start: Position, end: Position) -> str:
    """The source text from ``start`` to ``end``."""
    first, last = start[0] - 1, end[0] - 1
    begin, stop = column(lines[first], start[1]), column(lines[last], end[1])
    if first == last:
        return lines[first][begin:stop]
    return "".join([lines[first][begin:], *lines[first + 1 : last], lines[last][:stop]])
