"""The imports a module runs whenever it is imported, read from its ``ast`` body.

An import counts when it always runs where the tests run: at module level, in the body of
``if is_torch_available():`` (the tests run with torch) or the ``else`` of ``if TYPE_CHECKING:``;
not in a function, a ``try`` block or any other ``if``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from model_debugging.skips.source.modules import absolute_module

# `if <this>:` at module level: its body runs where the tests run (with torch), or never
_RUNS = "is_torch_available()"
_NEVER_RUNS = "TYPE_CHECKING"


def always_run_imports(statements: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of a module's body that always run when it is imported, in order."""
    for statement in statements:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield statement
        elif isinstance(statement, ast.If):
            condition = ast.unparse(statement.test)
            if condition == _RUNS:
                yield from always_run_imports(statement.body)
            elif condition == _NEVER_RUNS:
                yield from always_run_imports(statement.orelse)


def imported_modules(
    statements: list[ast.stmt], current: str
) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """(module, line, names) of each module the body of module ``current`` (not a package) always
    imports: ``names`` are those a ``from`` import takes from it, none for an ``import``."""
    found = []
    for statement in always_run_imports(statements):
        if isinstance(statement, ast.Import):
            found += [(alias.name, statement.lineno, ()) for alias in statement.names]
        else:
            module = absolute_module(current, False, statement.module or "", statement.level)
            found.append((module, statement.lineno, tuple(alias.name for alias in statement.names)))
    return tuple(found)
