"""The shape the code keeps: no module over 400 lines, and no broad ``except`` where the analyzer
evaluates (an unexpected error there is a bug that must fail the tests, not an undecided answer).

Function-local imports that would hide an import circle are caught by ``test_import_graph.py``,
which counts every import wherever it stands.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import model_debugging

PACKAGE_ROOT = Path(model_debugging.__file__).parent
MAX_LINES = 400
# The floors that interpret a test: the interpreter, the models of the APIs, what resolves
# classes for them and what decides a pair from their answers.
EVALUATING = ("skips/interp", "skips/models", "skips/resolve", "skips/decide")
BROAD = {"Exception", "BaseException"}


def _broad_handlers(source: str) -> list[int]:
    """Lines of the ``except`` clauses of ``source`` that catch everything (bare, ``Exception``,
    ``BaseException``, or a tuple holding one of them)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        names = {
            item.id if isinstance(item, ast.Name) else getattr(item, "attr", None) for item in caught if item
        }
        if node.type is None or names & BROAD:
            lines.append(node.lineno)
    return lines


def test_no_module_is_longer_than_400_lines():
    long = {
        path.relative_to(PACKAGE_ROOT).as_posix(): count
        for path in PACKAGE_ROOT.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_broad_except_where_the_analyzer_evaluates():
    found = {
        f"{path.relative_to(PACKAGE_ROOT).as_posix()}:{line}"
        for folder in EVALUATING
        for path in sorted((PACKAGE_ROOT / folder).rglob("*.py"))
        for line in _broad_handlers(path.read_text(encoding="utf-8"))
    }
    assert found == set()


@pytest.mark.parametrize(
    ("clause", "broad"),
    [
        ("except:", True),
        ("except Exception:", True),
        ("except Exception as error:", True),
        ("except (ValueError, BaseException):", True),
        ("except builtins.Exception:", True),
        ("except ValueError:", False),
        ("except (KeyError, TypeError) as error:", False),
    ],
)
def test_the_broad_except_finder(clause, broad):
    source = f"try:\n    pass\n{clause}\n    pass\n"
    assert _broad_handlers(source) == ([3] if broad else [])
