"""The environment guards a change edits: ``@require_*`` and ``@slow`` helpers.

The analyzer reads these decorators by name only, as conditions a machine with everything meets
(``parse/rules/condition_decorator.py``); it never runs the helper. So a helper made stricter (on
the 2026 snapshot of transformers, ``require_accelerate`` turned into ``unittest.skip(...)``) skips
every test it decorates while each verdict stays "ran". The PR check names each such helper the
change edits, with the common tests that carry it, instead of saying "No new skips".
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from model_debugging.skips.source.files import read_source


def is_guard_name(name: str) -> bool:
    """A decorator the analyzer takes for an environment guard by its (last dotted) name."""
    return name.startswith("require_") or name == "slow"


def _code(node: ast.AST) -> str:
    """The node's code, without its docstring and positions: an edit of either changes no skip."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(node) is not None:
        node = type(node)(**{**vars(node), "body": node.body[1:] or [ast.Pass()]})
    return ast.dump(node, include_attributes=False)


def guard_definitions(source: bytes) -> dict[str, tuple[int, str]]:
    """``name -> (line, code)`` of each guard helper the module defines at its top level (a function,
    or a name assigned, as ``require_x = unittest.skipUnless(...)``); {} when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # the scans name a file that does not parse
        return {}
    found: dict[str, tuple[int, str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [target.id for target in targets if isinstance(target, ast.Name)]
        else:
            continue
        for name in filter(is_guard_name, names):
            found[name] = (node.lineno, _code(node))
    return found


def _definitions(path: Path) -> dict[str, tuple[int, str]]:
    try:
        return guard_definitions(read_source(path))
    except OSError:  # a file the change adds or removes: no definition on that side
        return {}


def edited_guards(base: Path, head: Path, changed: Iterable[str]) -> tuple[tuple[str, int, str], ...]:
    """``(path, line, name)`` of each guard helper defined in base at one of the ``changed`` files
    (relative to both trees) whose code head changes or removes; ``line`` is head's (base's when removed)."""
    edited = []
    for path in sorted(changed):
        if not path.endswith(".py"):
            continue
        before, after = _definitions(base / path), _definitions(head / path)
        for name, (line, code) in before.items():
            if name not in after:
                edited.append((path, line, name))
            elif after[name][1] != code:
                edited.append((path, after[name][0], name))
    return tuple(edited)
