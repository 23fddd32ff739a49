"""The text of ``ast`` nodes, found from their positions in the source."""

from __future__ import annotations

import ast
import re


def python_lines(source: str) -> list[str]:
    """Lines as the parser splits them (``\\r\\n``, ``\\r`` or ``\\n``), ends kept: what
    ``ast.get_source_segment`` splits the whole source into at every call."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", source)


def column(line: str, offset: int) -> int:
    """The index in ``line`` of ``ast``'s column ``offset`` (which counts UTF-8 bytes)."""
    return offset if line.isascii() else len(line.encode()[:offset].decode())


def text_of(lines: list[str], node: ast.AST) -> str:
    """The source text of ``node``, from its first character to its last."""
    first, last = node.lineno - 1, node.end_lineno - 1
    start, end = column(lines[first], node.col_offset), column(lines[last], node.end_col_offset)
    if first == last:
        return lines[first][start:end]
    return "".join([lines[first][start:], *lines[first + 1 : last], lines[last][:end]])
