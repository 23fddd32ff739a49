"""The names a module binds when it runs, read from its ``ast`` body: what ``from module import
name`` can take from it.

Every name a statement of the module body binds counts, wherever the statement is (in ``if``,
``try``, ``with`` or loop blocks, under ``TYPE_CHECKING`` too): more names than a run binds, never
fewer, so a name missing from them is missing at run time: the names a function declares
``global`` count too (read from the text: the reader does not parse most function bodies). A
module that may bind names no statement spells (a star import, a module ``__getattr__``, writes
through ``globals()``, ``vars()``, ``sys.modules[__name__]`` or ``exec``, a ``match``) gives None:
not told.
"""

from __future__ import annotations

import ast
import re

# text that may bind a module name no statement of its body spells (the regex, slower, tells
# `globals()` from `add_safe_globals()` in the few files holding one of the strings)
_UNSPELLED = ("import *", "globals(", "vars(", "sys.modules[__name__]", "exec(")
_UNSPELLED_CALL = re.compile(r"import \*|sys\.modules\[__name__\]|(?<![\w.])(?:globals|vars|exec)\(")
# `global a, b` in a function (or a line of a docstring that reads so: more names, never fewer)
_GLOBAL = re.compile(r"^[ \t]+global[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)", re.MULTILINE)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With, ast.For, ast.While)


def bound_names(body: list[ast.stmt], source: str) -> tuple[str, ...] | None:
    """The names the module of ``body`` (its text ``source``) binds, sorted; None when not told."""
    if any(text in source for text in _UNSPELLED) and _UNSPELLED_CALL.search(source):
        return None
    walrus = ":=" in source
    found = {name.strip() for names in _GLOBAL.findall(source) for name in names.split(",")}
    for statement in _statements(body):
        if isinstance(statement, ast.Match) or (
            isinstance(statement, ast.FunctionDef) and statement.name == "__getattr__"
        ):
            return None
        found.update(_bound_by(statement))
        if walrus and not isinstance(statement, _SCOPES):  # `(x := ...)` in it binds x in the module
            found.update(node.target.id for node in ast.walk(statement) if isinstance(node, ast.NamedExpr))
    return tuple(sorted(found))


def _statements(body: list[ast.stmt]):
    """The statements of a module body, also those nested in its blocks (not in functions or classes)."""
    for statement in body:
        yield statement
        if isinstance(statement, _BLOCKS):
            yield from _statements(statement.body)
            yield from _statements(getattr(statement, "orelse", []))
        if isinstance(statement, (ast.Try, ast.TryStar)):
            yield from _statements(statement.finalbody)
            for handler in statement.handlers:
                if handler.name:
                    yield ast.Name(handler.name, ast.Store())
                yield from _statements(handler.body)


def _bound_by(statement: ast.AST) -> list[str]:
    if isinstance(statement, ast.Name):  # an exception handler's name
        return [statement.id]
    if isinstance(statement, _SCOPES):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name.split(".")[0] for alias in statement.names]
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign, ast.For)):
        targets = [statement.target]
    elif isinstance(statement, ast.With):
        targets = [item.optional_vars for item in statement.items if item.optional_vars is not None]
    else:
        return []
    return [node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)]
