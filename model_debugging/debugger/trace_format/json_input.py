"""Loading a trace's JSON files strictly: anything Python cannot hold faithfully is a ``TraceError``.

``json.loads`` alone accepts a duplicated key (keeping the last), lone surrogates (``"\\udc80"``,
which no later print or write can encode), and raises a bare ``ValueError`` for an integer over
Python's digit limit and a ``RecursionError`` for deep nesting, neither saying where. Here each
becomes one message naming the file and where in it: the node (``#order 'module_path'``) and the
key path inside it, or the line.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from model_debugging.debugger.trace_format.records import TraceError

# "\ud800".."\udfff" escapes: only they can put a surrogate into a string json.loads returns (the
# UTF-8 decoder refuses encoded ones); a valid escaped pair matches too and is then checked
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# what the nesting scan counts: strings (skipped whole) and brackets
_NESTING_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
SHOWN_CHARACTERS = 80


def shown(text: Any) -> str:
    """``text`` quoted with escapes (printable anywhere), cut to ``SHOWN_CHARACTERS``."""
    quoted = ascii(text)
    if len(quoted) <= SHOWN_CHARACTERS:
        return quoted
    return f"{quoted[:SHOWN_CHARACTERS]}... ({len(quoted) - SHOWN_CHARACTERS} more characters)"


class _TooLongInteger:
    """Stands for an integer literal over Python's digit limit until the check below names where it is."""

    def __init__(self, digits: int):
        self.digits = digits


class _DuplicatedKeys(dict):
    """An object that had a key twice (the last value kept), until the check below names where it is."""

    def __init__(self, pairs: list[tuple[str, Any]], key: str):
        super().__init__(pairs)
        self.key = key


class _Parser:
    """One ``json.loads`` call whose hooks flag the values the check must then locate."""

    def __init__(self) -> None:
        self.flagged = False
        self._limit = sys.get_int_max_str_digits()  # 0: no limit

    def parse_int(self, literal: str) -> int | _TooLongInteger:
        digits = len(literal) - literal.startswith("-")
        if self._limit and digits > self._limit:
            self.flagged = True
            return _TooLongInteger(digits)
        return int(literal)

    def object_pairs(self, pairs: list[tuple[str, Any]]) -> dict:
        result = dict(pairs)
        if len(result) == len(pairs):
            return result
        self.flagged = True
        seen: set[str] = set()
        return _DuplicatedKeys(pairs, next(key for key, _ in pairs if key in seen or seen.add(key)))


def load_json(path: Path, root: str = "") -> tuple[Any, bytes]:
    """The parsed content of the JSON file ``path`` and its bytes; ``root`` is the key of its root node ("" for the top level).

    Raises:
        TraceError: the file cannot be read, is not UTF-8 JSON, or holds a duplicated key, an
            integer over Python's digit limit, a lone surrogate, or nesting deeper than Python reads.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TraceError(path, f"cannot read file: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TraceError(path, f"not UTF-8 text (byte {error.start}): {error.reason}") from None
    parser = _Parser()
    try:
        value = json.loads(text, object_pairs_hook=parser.object_pairs, parse_int=parser.parse_int)
    except json.JSONDecodeError as error:
        raise TraceError(
            path, f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        depth, line = _deepest_nesting(text)
        raise TraceError(
            path, f"nested {depth} levels deep at line {line}: deeper than Python can read"
        ) from None
    if parser.flagged or _SURROGATE_ESCAPE.search(text):
        problem = first_problem(value, root)
        if problem is not None:
            raise TraceError(path, problem)
    return value, data


def _deepest_nesting(text: str) -> tuple[int, int]:
    """The deepest nesting of ``text`` and the line where it is first reached."""
    depth = deepest = position = 0
    for token in _NESTING_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest, position = depth, token.start()
        elif bracket in "]}":
            depth -= 1
    return deepest, text.count("\n", 0, position) + 1


def _problem_of(value: Any) -> str | None:
    if isinstance(value, _TooLongInteger):
        return f"an integer of {value.digits} digits (Python reads at most {sys.get_int_max_str_digits()})"
    if isinstance(value, _DuplicatedKeys):
        return f"key {shown(value.key)} appears twice in one object: one record would be lost"
    if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
        return f"{shown(value)} holds a lone surrogate, which is not text"
    return None


def first_problem(value: Any, root: str = "") -> str | None:
    """Where the first flagged value (see :func:`load_json`) of a parsed trace file is, and what it is.

    Nodes are the object at ``root``, the objects with a ``module_path`` key and the objects listed
    under ``children``; they are numbered in pre-order, as :func:`.reading.read_trace` numbers them.
    """
    node_count = 0
    # (item, key path inside the current node, the node's label, whether it is listed under "children")
    stack: list[tuple[Any, str, str, bool]] = [(value, "", "the file's top level", False)]
    while stack:
        item, where, node, is_child = stack.pop()
        is_root = node_count == 0 and where == root
        if isinstance(item, dict) and ("module_path" in item or is_child or is_root):
            path = item.get("module_path")
            node = f"node #{node_count} {shown(path) if isinstance(path, str) else '(no module_path string)'}"
            node_count += 1
            where = ""
        problem = _problem_of(item)
        if problem is not None:
            return f"{node}{f', at {where}' if where else ''}: {problem}"
        if isinstance(item, dict):
            children = []
            for key, child in item.items():
                key_problem = _problem_of(key)
                if key_problem is not None:
                    return f"{node}{f', in {where}' if where else ''}: key {key_problem}"
                path = f"{where}.{key}" if where else key
                children.append((child, path, node, False))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            listed = where.rpartition(".")[2] == "children"
            stack.extend(
                (child, f"{where}[{index}]", node, listed) for index, child in reversed(list(enumerate(item)))
            )
    return None
