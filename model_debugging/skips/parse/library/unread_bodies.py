"""A library file's text without the bodies of the methods the reader never reads.

Parsing is half of reading the library cold, and half of a modeling file's bytes are the bodies of
methods the reader only names: ``forward``, attention helpers, ``_init_weights``... Before
``ast.parse``, each such body, in a class written at the top of the file, becomes ``pass`` on its
first line and blank lines below, so every line keeps its number. Kept are the bodies of the
methods the reader names (``read.BODIES_READ``: the constructors, ``get_input_embeddings``), of
class methods and of every method a kept body calls as ``self.<name>`` (a constructor's call of one
is read into it), then of those they call.

The bodies are found from the text's lines, not from a parse: a method is a ``def`` indented four
spaces under a ``class`` at column 0, its body runs from the line after the signature's closing
``:`` to the next line of code indented four spaces or less. A body is kept as written whenever
that reading could be wrong: its triple quotes or brackets do not pair up within it, or the
signature is not one the reading recognises. The parse decides: every elided method must be
found where it was elided, a ``def`` of that class holding just the ``pass``, and the bodies the
reader reads, found in the tree, must all be there; otherwise the file is parsed whole
(:func:`parse_library_source`).
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass

from model_debugging.skips.parse.ast_nodes import is_class_method

# searched from a newline, which the regular expression engine finds fast (a ``^`` is tried everywhere)
_METHOD = re.compile(r"\n    (?:async[ \t]+)?def[ \t]+(\w+)")
_TOP_CODE = re.compile(r"\n[^\s#]")  # a line of code at column 0
_SIGNATURE_END = re.compile(r":[ \t]*(?:#[^\n]*)?\n")
_BODY_END = re.compile(r"\n(?= {0,4}[^\s#])")  # the next line of code indented four spaces or less
_SELF_NAME = re.compile(r"self\s*\.\s*(\w+)")  # also `myself.x`: a name kept needlessly, never one lost
_PAIRS = (('"""', '"""'), ("'''", "'''"), ("(", ")"), ("[", "]"), ("{", "}"))


@dataclass(frozen=True)
class ElidedText:
    """``text`` with bodies elided; ``bodies`` maps (class line, ``def`` line) to the line of its
    ``pass`` and the last line of code the body had."""

    text: str
    bodies: dict[tuple[int, int], tuple[int, int]]


def parse_library_source(
    source: str, path: str, read_bodies: frozenset[str]
) -> tuple[ast.Module, dict[int, dict[int, int]]]:
    """The tree of ``source`` with the bodies the reader does not read elided (it reads those of the
    methods named in ``read_bodies``, of class methods, and of what they call), and the last line
    of each elided body, by class line then ``def`` line; the whole file's tree (and no elided
    body) when the elided text does not check out. Raises what ``ast.parse`` raises on ``source``."""
    elided = without_unread_bodies(source, read_bodies)
    if elided is not None:
        try:
            tree = ast.parse(elided.text, filename=path)
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None and _elision_holds(tree, source, elided.bodies, read_bodies):
            ends: dict[int, dict[int, int]] = {}
            for (class_line, def_line), (_, last) in elided.bodies.items():
                ends.setdefault(class_line, {})[def_line] = last
            return tree, ends
    return ast.parse(source, filename=path), {}


def without_unread_bodies(source: str, read_bodies: frozenset[str]) -> ElidedText | None:
    """``source`` with the unread method bodies elided (see :func:`parse_library_source`); None when
    there is none to elide (or the text has tabs or carriage returns, whose indentation the reading
    does not follow)."""
    if "\t" in source or "\r" in source or "\f" in source:
        return None
    top_lines = [match.start() + 1 for match in _TOP_CODE.finditer(source)]
    if source[:1].strip() and not source.startswith("#"):
        top_lines.insert(0, 0)
    methods: dict[int, list[_Method]] = {}  # by where their class starts, in the file's order
    previous = 0  # where the method before starts
    for match in _METHOD.finditer(source):
        def_start = match.start() + 1
        before, previous = previous, def_start
        class_start = _enclosing_class(source, top_lines, def_start)
        if class_start is None:
            continue
        # a class method's decorator is somewhere above its `def`, below the method before
        decorated = source.find("classmethod", max(before, class_start), def_start) >= 0
        body = _body(source, match.end())
        methods.setdefault(class_start, []).append(_Method(match.group(1), def_start, body, decorated))
    spans: list[tuple[int, int, int, int, int]] = []  # class, def, body start, body end, last code
    for class_start, found in methods.items():
        read = _read_names(source, top_lines, class_start, found, read_bodies)
        spans += [
            (class_start, method.start, *method.body)
            for method in found
            if method.name not in read and method.body is not None
        ]
    if not spans:
        return None
    offsets = sorted(
        {
            offset
            for class_start, def_start, start, _, last in spans
            for offset in (class_start, def_start, start, last)
        }
    )
    lines, line, previous = {}, 1, 0
    for offset in offsets:  # each offset's line, counting the newlines once
        line += source.count("\n", previous, offset)
        lines[offset], previous = line, offset
    pieces, bodies, cursor = [], {}, 0
    for class_start, def_start, start, end, last in spans:
        pieces += [source[cursor:start], " " * 8, "pass", "\n" * source.count("\n", start, end)]
        cursor = end
        bodies[(lines[class_start], lines[def_start])] = (lines[start], lines[last])
    pieces.append(source[cursor:])
    return ElidedText("".join(pieces), bodies)


def _enclosing_class(source: str, top_lines: list[int], offset: int) -> int | None:
    """Where the ``class`` statement at column 0 whose body holds ``offset`` starts, else None. A
    header written over several lines ends with a line at column 0 starting with ``)``."""
    index = bisect.bisect_left(top_lines, offset) - 1
    while index >= 0 and source.startswith(")", top_lines[index]):
        index -= 1
    if index < 0 or not source.startswith("class ", top_lines[index]):
        return None
    return top_lines[index]


def _body(source: str, after_name: int) -> tuple[int, int, int] | None:
    """(start, end, end of its last line of code) of the body of the method whose name ends at
    ``after_name``: None when its signature or its body cannot be read from lines alone."""
    signature = _SIGNATURE_END.search(source, after_name)
    if signature is None:
        return None
    header = source[after_name : signature.start()]
    # every line of a signature written over several lines is indented deeper, but its closing `)`
    if any(not line.startswith(("     ", "    )", "    ]")) for line in header.split("\n")[1:]):
        return None
    if not _pairs_up(header):
        return None
    start = signature.end()
    found = _BODY_END.search(source, start - 1)
    end = found.start() + 1 if found is not None else len(source)
    if end <= start or not _pairs_up(source[start:end]):
        return None
    last = _last_code_line_end(source, start, end)
    return (start, end, last) if last is not None else None


def _pairs_up(text: str) -> bool:
    return all(
        (text.count(opening) % 2 == 0) if opening == closing else text.count(opening) == text.count(closing)
        for opening, closing in _PAIRS
    )


def _last_code_line_end(source: str, start: int, end: int) -> int | None:
    """The offset of the start of the last line in ``source[start:end]`` that is neither blank nor
    a comment."""
    position = end
    while position > start:
        line_start = source.rfind("\n", start - 1, position - 1) + 1
        line = source[line_start:position].strip()
        if line and not line.startswith("#"):
            return line_start
        position = line_start
    return None


@dataclass(frozen=True)
class _Method:
    name: str
    start: int  # where its `def` line starts
    body: tuple[int, int, int] | None  # see _body
    class_method: bool


def _read_names(
    source: str, top_lines: list[int], class_start: int, methods: list[_Method], read_bodies: frozenset[str]
) -> set[str]:
    """The methods of a class whose bodies the reader reads: the constructors, class methods, and
    every method a read body calls as ``self.<name>`` (a constructor's call of one is read into
    it), then those they call. Every name the class's text writes as ``self.<name>`` when a read
    body's extent is not known."""
    names = {method.name for method in methods}
    read = {method.name for method in methods if method.name in read_bodies or method.class_method}
    scanned: set[int] = set()  # the methods whose bodies were looked at, by where they start
    while to_scan := [m for m in methods if m.name in read and m.start not in scanned]:
        for method in to_scan:
            if method.body is None:
                return read | _class_self_names(source, top_lines, class_start)
            scanned.add(method.start)
            read |= names.intersection(_SELF_NAME.findall(source, method.body[0], method.body[1]))
    return read


def _class_self_names(source: str, top_lines: list[int], class_start: int) -> set[str]:
    """The names the class's whole text writes as ``self.<name>``."""
    index = bisect.bisect_right(top_lines, class_start)
    while index < len(top_lines) and source.startswith(")", top_lines[index]):
        index += 1
    class_end = top_lines[index] if index < len(top_lines) else len(source)
    return set(_SELF_NAME.findall(source, class_start, class_end))


def _elision_holds(
    tree: ast.Module, source: str, bodies: dict[tuple[int, int], tuple[int, int]], read_bodies: frozenset[str]
) -> bool:
    """Whether the tree read from the elided text is one the reader reads as the whole file: every
    elided body is the body of a ``def`` at its line directly in the class at its line, that
    ``pass`` alone, and no body the reader reads was elided: the constructors, the class methods
    and every method their text (at its place in the tree) calls as ``self.<name>``, then those
    that one calls. The lines found before the parse only propose; this decides."""
    lines = source.split("\n")
    found = 0
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.col_offset != 0:
            continue
        methods = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for item in methods:
            elided = bodies.get((node.lineno, item.lineno))
            if elided is None:
                continue
            body = item.body
            if len(body) != 1 or not isinstance(body[0], ast.Pass) or body[0].lineno != elided[0]:
                return False
            found += 1
        if not _read_bodies_kept(node.lineno, methods, lines, bodies, read_bodies):
            return False
    return found == len(bodies)


def _read_bodies_kept(
    class_line: int,
    methods: list[ast.FunctionDef | ast.AsyncFunctionDef],
    lines: list[str],
    bodies: dict[tuple[int, int], tuple[int, int]],
    read_bodies: frozenset[str],
) -> bool:
    by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for item in methods:
        by_name.setdefault(item.name, []).append(item)
    to_read = [item for item in methods if item.name in read_bodies or is_class_method(item)]
    seen: set[int] = set()
    while to_read:
        item = to_read.pop()
        if item.lineno in seen:
            continue
        seen.add(item.lineno)
        if (class_line, item.lineno) in bodies:
            return False  # a body the reader reads was elided
        text = "\n".join(lines[item.lineno - 1 : item.end_lineno])
        for name in set(_SELF_NAME.findall(text)):
            to_read += by_name.get(name, ())
    return True
