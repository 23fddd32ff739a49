"""In a scan of one test, which test methods of a test file need not be parsed.

A verdict on ``test_x`` reads the definitions of ``test_x`` (in any class), the class decorators
and attributes, ``setUp`` and every other method that is not a test, and whatever those call. Of
the other test methods it reads only those some code it reads calls or names: ``self.test_y()``,
``test_x = test_y``. So the body of a test method is left out when it is not ``test_x``, not one of
its parameterized cases (a name starting with ``test_x``) nor a name ``test_x`` starts with, does
not read ``self._testMethodName``, and the rest of its file (without the bodies left out) never
names it but at its ``def`` and in comments. A name written as the start of a built one
(``f"test_{name}"``) keeps every test it starts.

The record lists the tests left out and the tests the rest of the file names as attributes (the
only way the records of another file reach a method). Once every file is parsed, a file is parsed
again with all its test bodies when another file names one of its left-out tests
(:meth:`~model_debugging.skips.parse.record_store.RecordStore.parse_named_tests_again`). The
run-time checks read every body they run from the whole source, as in a full scan.
"""

from __future__ import annotations

import ast
import re

from model_debugging.skips.records.test_files import NamedTests

_TEST_WORD = re.compile(r"test\w*")  # faster than with a leading \b, checked by hand
_DEF_BEFORE = re.compile(r"(?:^|\W)def[ \t]+\Z")  # searched up to the name: \Z is its start
_DEF_REACH = 40  # characters looked back for the `def` of a name


def named_tests(text: str, *, in_code: bool = False) -> NamedTests:
    """The test names ``text`` mentions other than at their ``def`` and in comments, and the starts
    of the names it builds (a name followed by ``{``, as in ``f"test_{name}"``). ``in_code``: only
    attributes (``self.test_y()``, ``super().test_y()``, ``XTest.test_y``), the only mentions by which
    the scanner's records of another file reach a method (a string is not followed, a bare name in a
    method is no method, one in a class body is of that class)."""
    names: set[str] = set()
    prefixes: list[str] = []
    for match in _TEST_WORD.finditer(text):
        start, end = match.span()
        before = text[start - 1] if start else ""
        if before.isalnum() or before == "_":
            continue  # inside a word: `unittest`, `model_tester`
        if in_code and before != ".":
            continue
        if _DEF_BEFORE.search(text, max(0, start - _DEF_REACH), start) or _in_comment(text, start):
            continue
        if text[end : end + 1] == "{":
            prefixes.append(match.group())
        else:
            names.add(match.group())
    return NamedTests(frozenset(names), tuple(dict.fromkeys(prefixes)))


def _in_comment(text: str, position: int) -> bool:
    """Whether ``position`` follows a ``#`` on its line with no quote before it (a comment, such as
    ``# Copied from ...XTest.test_y``; a ``#`` after a quote may be in a string: not a comment)."""
    line_start = text.rfind("\n", 0, position) + 1
    hash_mark = text.find("#", line_start, position)
    if hash_mark < 0:
        return False
    before = text[line_start:hash_mark]
    return "'" not in before and '"' not in before


def may_leave_out(method: ast.FunctionDef | ast.AsyncFunctionDef, test: str, reads_test_name: bool) -> bool:
    """Whether a verdict on ``test`` may not read the body of ``method`` (a method of a class), when
    no code names it: a test other than ``test`` and its cases that does not read
    ``self._testMethodName`` (``reads_test_name``)."""
    name = method.name
    return name.startswith("test") and not (name.startswith(test) or test.startswith(name) or reads_test_name)
