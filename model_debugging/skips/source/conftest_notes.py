"""``conftest.py`` files that may skip or drop model tests: not modelled, so the scan says so.

pytest loads the ``conftest.py`` of every folder from the checkout's root down to a test file. One
can skip tests (``pytest.skip``, a skip mark it adds), leave files out (``collect_ignore``,
``collect_ignore_glob``, a ``pytest_ignore_collect`` hook) or drop collected tests (a
``pytest_collection_modifyitems`` hook that removes or deselects items). The scanner does not run
them: each such file gets a note naming what it does, so a reader knows the verdicts of the tests
it affects are read as if it did nothing. A hook that only adds other marks (transformers' own
``not_device_test``) is not noted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from model_debugging.skips.source.files import read_source

_SKIPS = ("skip", "skipif", "skipIf", "skipUnless", "SkipTest", "importorskip")
_IGNORES = ("collect_ignore", "collect_ignore_glob")
_DROPS = (
    "remove",
    "pop",
    "clear",
    "pytest_deselected",
)  # items.remove(x), config.hook.pytest_deselected(...)


def _dotted(node: ast.AST) -> str:
    return ast.unparse(node) if isinstance(node, (ast.Name, ast.Attribute)) else ""


def _findings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for each way the module may skip or drop tests."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name.rsplit(".", 1)[-1] in _SKIPS and (
                "pytest" in name or "unittest" in name or "SkipTest" in name
            ):
                yield node.lineno, f"calls {name}"
        elif isinstance(node, ast.Raise) and node.exc is not None and "SkipTest" in ast.unparse(node.exc):
            yield node.lineno, "raises SkipTest"
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in _IGNORES:
                    yield node.lineno, f"sets {target.id}"
        elif isinstance(node, ast.FunctionDef) and node.name == "pytest_ignore_collect":
            yield node.lineno, "defines pytest_ignore_collect"
        elif (
            isinstance(node, ast.FunctionDef)
            and node.name == "pytest_collection_modifyitems"
            and any(_drops(inner) for inner in ast.walk(node))
        ):
            yield node.lineno, "drops collected tests in pytest_collection_modifyitems"


def _drops(node: ast.AST) -> bool:
    """``items.remove(x)`` / ``config.hook.pytest_deselected(...)`` / ``items[:] = ...`` / ``del items[i]``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in _DROPS
    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else []
    return any(isinstance(target, ast.Subscript) for target in targets)


_NOT_MODELLED = ": conftest.py files are not modelled, the tests it skips or drops are read as if it did not"


def _note(relative: str, line: int, what: str) -> str:
    return f"note: {relative}:{line} {what}{_NOT_MODELLED}"


def note_subject(note: str) -> str:
    """``path:line what`` of a note :func:`conftest_notes` wrote (``tests/conftest.py:3 sets collect_ignore``)."""
    return note.removeprefix("note: ").removesuffix(_NOT_MODELLED)


def notes_about(notes: Iterable[str], files: Iterable[str]) -> tuple[str, ...]:
    """The ``notes`` (as :func:`conftest_notes` writes them) on one of ``files`` (paths relative to the checkout)."""
    prefixes = tuple(f"note: {path}:" for path in files)
    return tuple(note for note in notes if note.startswith(prefixes))


def conftest_notes(repo: Path, test_files: Iterable[str]) -> tuple[str, ...]:
    """One note per ``conftest.py`` that pytest loads for ``test_files`` and that may skip or drop tests."""
    folders = {PurePosixPath()}
    for path in test_files:
        folders.update(PurePosixPath(path).parents)
    notes = []
    for folder in sorted(folders):
        relative = (folder / "conftest.py").as_posix()
        try:
            tree = ast.parse(read_source(repo / relative))
        except (OSError, SyntaxError, ValueError):  # absent, or pytest would refuse it too
            continue
        found = dict(sorted(_findings(tree)))
        if found:
            line, what = next(iter(found.items()))
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            notes.append(_note(relative, line, what + more))
    return tuple(notes)
