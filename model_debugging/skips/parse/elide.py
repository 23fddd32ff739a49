"""Blank out code the scanner never reads before libcst parses a model test file.

libcst is most of a cold scan's time, so Python's own C parser first finds this code and replaces
it by ``pass`` (the first three kinds in model test files, the last in every file a scan of one
test parses):

- the bodies of plain ``unittest.TestCase`` classes (bases: only ``unittest.TestCase``), i.e.
  integration tests: no common test can apply to them. The class is kept and marked elided; one
  that another class of the file inherits from is kept whole, and the scanner parses a file again
  in full when a class elsewhere inherits an elided one;
- the methods of a model tester, but their decorators and names (each becomes ``def name(self):
  pass``): a class named ``...Tester`` (not ``Test...``, which pytest collects), with no ``test``
  or ``setUp`` method, no ``TestCase`` base and no class of the file inheriting it. Only the names
  of its methods are read from this parse; its constructor's defaults are read from Python's tree
  (``parse/init_defaults.py``), and the run-time checks read the tester from the whole source. The
  class is marked elided like a plain ``TestCase``;
- inside methods (but ``__init__``, ``setUp`` and methods reading ``self._testMethodName``, whose
  loops may skip some tests by name), the blocks of loops, nested functions and classes, ``except``
  handlers, and the statements of an ``if`` after its first one: the scanner reads the statements
  a method always reaches (its top level and the bodies of ``with`` and ``try``, see
  ``rules/reach.py``) and the first statement under an ``if``. A blanked block that held a
  ``return`` of the method becomes ``return``, so the scanner still sees that it may end the method.
  Of the statements read, assignments and assertions (a fifth of what is left) become ``_ = 0``:
  no rule reads them, but they keep the method from reading as a no-op;
- in a scan of one test, the bodies of the test methods its verdicts never read (see
  ``other_tests.py``).

Line numbers are unaffected: they come from the original text.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from model_debugging.skips.parse.other_tests import may_leave_out, named_tests
from model_debugging.skips.parse.source_lines import python_lines, text_of
from model_debugging.skips.records.test_files import NamedTests

PLAIN_TEST_CASE_BASES = {"unittest.TestCase", "TestCase"}
_READ_WHOLE = {"__init__", "setUp"}  # the scanner reads nested statements of these
_BLOCK_STATEMENTS = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_READ_BLOCKS = (ast.With, ast.AsyncWith, ast.Try, ast.TryStar)
# statements no rule reads in a method (a skip, a guard, a call it delegates to are none of them)
_UNREAD_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Assert)


def _base_names(node: ast.ClassDef) -> list[str]:
    return [ast.unparse(base) for base in node.bases]


def _start(node: ast.stmt) -> int:
    return min([node.lineno] + [decorator.lineno for decorator in getattr(node, "decorator_list", ())])


Span = tuple[int, int, str]  # first and last line of some code, and the text that replaces them


def _block_span(header_line: int, block: list[ast.stmt]) -> Span | None:
    """The span of a block written on its own lines below its header: ``pass``, or ``return`` when
    it holds one."""
    if not block or _start(block[0]) <= header_line or block[-1].end_lineno is None:
        return None
    blank = "return\n" if any(map(_returns, block)) else "pass\n"
    return _start(block[0]), block[-1].end_lineno, " " * block[0].col_offset + blank


def _method_span(lines: list[str], method: ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
    """The span of a method from its ``def`` (its decorators kept): ``def name(self): pass``."""
    indent = lines[method.lineno - 1][: method.col_offset]
    keyword = "async def" if isinstance(method, ast.AsyncFunctionDef) else "def"
    return method.lineno, method.end_lineno, f"{indent}{keyword} {method.name}(self):\n{indent}    pass\n"


def _returns(node: ast.AST) -> bool:
    """Whether ``node`` holds a ``return`` of the function it is written in."""
    if isinstance(node, ast.Return):
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.expr)):
        return False
    return any(_returns(child) for child in ast.iter_child_nodes(node))


def _unread_statements(lines: list[str], body: list[ast.stmt]) -> list[Span]:
    """The assignments and assertions of ``body`` written on lines of their own: each becomes
    ``_ = 0`` (no rule reads them, but a statement must stay: a body of only ``pass`` is a no-op)."""
    spans = []
    for index, statement in enumerate(body):
        if not isinstance(statement, _UNREAD_STATEMENTS) or statement.end_lineno is None:
            continue
        own_line = not lines[statement.lineno - 1][: statement.col_offset].strip()
        after = body[index + 1].lineno if index + 1 < len(body) else None
        if own_line and (after is None or after > statement.end_lineno):
            spans.append((statement.lineno, statement.end_lineno, " " * statement.col_offset + "_ = 0\n"))
    return spans


def _unread_blocks(lines: list[str], body: list[ast.stmt]) -> list[Span]:
    spans = _unread_statements(lines, body)
    for statement in body:
        if isinstance(statement, ast.If):
            blocks = [(statement.lineno, statement.body[1:])]
        elif isinstance(statement, _READ_BLOCKS):  # a skip in their body is reached: read like the method's
            spans += _unread_blocks(lines, statement.body)
            blocks = [(handler.lineno, handler.body) for handler in getattr(statement, "handlers", ())]
        elif isinstance(statement, _BLOCK_STATEMENTS):
            blocks = [(statement.lineno, statement.body)]
        else:
            continue
        spans += [span for line, block in blocks if (span := _block_span(line, block)) is not None]
    return spans


def _is_tester(node: ast.ClassDef, bases: set[str], inherited: set[str]) -> bool:
    """A model tester no test of the file inherits (see the module's docstring)."""
    if not node.name.endswith("Tester") or node.name.startswith("Test") or node.name in inherited:
        return False
    if any(base.split(".")[-1] == "TestCase" for base in bases):
        return False
    return not any(
        isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith(("test", "setUp"))
        for item in node.body
    )


class Elided(NamedTuple):
    text: str  # the source with unread code replaced by ``pass``
    classes: frozenset[str] = frozenset()  # the plain TestCase classes and testers elided
    # for a scan of one test: the test methods whose bodies were left out, and the tests the rest
    # of the source names as attributes (the code elided for every test included: a class of
    # another file inheriting an elided one has its file parsed again in full)
    tests: tuple[str, ...] = ()
    named: NamedTests | None = None


def elide_unread_code(
    source: str, tree: ast.Module | None = None, *, unread: bool = True, test: str | None = None
) -> Elided:
    """``source`` without the code the scanner never reads (with ``unread``) and, with ``test``,
    without the tests a verdict on that test never reads.

    ``tree`` is ``ast.parse(source)`` when the caller has it. The source comes back unchanged when
    Python cannot parse it (libcst then reports the error).
    """
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return Elided(source)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    inherited = {name for node in classes for name in _base_names(node)}
    spans, elided = [], set()
    # (name, body's span, spans of its unread blocks) of the tests a verdict on ``test`` may not read
    candidates: list[tuple[str, Span, list[Span]]] = []
    split = python_lines(source)  # as Python numbers them: "\r" ends a line too
    lines = split if "_testMethodName" in source else None  # rare: only then is a method's text searched
    for node in classes:
        bases = set(_base_names(node))
        plain = bases and bases <= PLAIN_TEST_CASE_BASES and not node.keywords and node.name not in inherited
        span = _block_span(node.lineno, node.body) if plain and unread else None
        if span is not None:
            spans.append(span)
            elided.add(node.name)
            continue
        if unread and _is_tester(node, bases, inherited):
            spans += [
                _method_span(split, method)
                for method in node.body
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
            elided.add(node.name)
            continue
        for method in node.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name in _READ_WHOLE:
                continue
            reads_test_name = lines is not None and "_testMethodName" in text_of(lines, method)
            blocks = _unread_blocks(split, method.body) if unread and not reads_test_name else []
            if (
                test is not None
                and may_leave_out(method, test, reads_test_name)
                and (span := _block_span(method.lineno, method.body)) is not None
            ):
                candidates.append((method.name, span, blocks))
            else:
                spans += blocks
    left_out = _unnamed(split, candidates) if candidates else set()
    for name, span, blocks in candidates:
        spans += [span] if name in left_out else blocks
    named = None
    if test is not None:  # what the text other than the tests left out names, in code
        test_spans = [span for name, span, _ in candidates if name in left_out]
        named = named_tests(_replaced(split, test_spans) if test_spans else source, in_code=True)
    if not spans:
        return Elided(source, named=named)
    return Elided(_replaced(split, spans), frozenset(elided), tuple(sorted(left_out)), named)


def _unnamed(lines: list[str], candidates: list[tuple[str, Span, list[Span]]]) -> set[str]:
    """The names of ``candidates`` that the text without their bodies never names (named ones are
    kept, and what their bodies name is looked for in turn)."""
    left_out = {name for name, _, _ in candidates}
    while True:
        text = _replaced(lines, [span for name, span, _ in candidates if name in left_out])
        named = named_tests(text)
        unnamed = {name for name in left_out if not named.name(name)}
        if unnamed == left_out:
            return left_out
        left_out = unnamed


def _replaced(lines: list[str], spans: list[Span]) -> str:
    """``lines`` joined, each span's lines replaced by its text."""
    kept, position = [], 0
    for first, last, text in sorted(spans):
        if first - 1 < position:
            continue
        kept.extend(lines[position : first - 1])
        kept.append(text)
        position = last
    kept.extend(lines[position:])
    return "".join(kept)
