"""Blank out the bodies of plain ``unittest.TestCase`` classes before libcst parses a model file.

Integration test classes (bases: only ``unittest.TestCase``) hold over half of the lines of the
model test files, yet no common test can apply to them: they include no mixin. Python's own C
parser finds them in a fraction of libcst's time, and their bodies are replaced by ``pass``; the
class itself is kept, marked elided. A class that another class of the same file inherits from is
kept whole, and the scanner parses a file again in full when a class elsewhere inherits an elided
one. Line numbers are unaffected: they come from the original text.
"""

from __future__ import annotations

import ast

PLAIN_TEST_CASE_BASES = {"unittest.TestCase", "TestCase"}


def _base_names(node: ast.ClassDef) -> list[str]:
    return [ast.unparse(base) for base in node.bases]


def elide_plain_test_cases(source: str) -> tuple[str, frozenset[str]]:
    """``(source with the bodies of plain TestCase classes replaced by pass, names of those classes)``.

    The source comes back unchanged when Python cannot parse it (libcst then reports the error).
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source, frozenset()
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    inherited = {name for node in classes for name in _base_names(node)}
    spans = []
    for node in classes:
        bases = set(_base_names(node))
        if node.name in inherited or node.keywords or not bases or not bases <= PLAIN_TEST_CASE_BASES:
            continue
        first = node.body[0]
        start = min([first.lineno] + [decorator.lineno for decorator in getattr(first, "decorator_list", ())])
        if start > node.lineno and node.end_lineno is not None:
            spans.append((node.name, start, node.end_lineno))
    if not spans:
        return source, frozenset()
    lines = source.splitlines(keepends=True)
    kept, position = [], 0
    for _, first, last in spans:
        kept.extend(lines[position : first - 1])
        kept.append("    pass\n")
        position = last
    kept.extend(lines[position:])
    return "".join(kept), frozenset(name for name, _, _ in spans)
