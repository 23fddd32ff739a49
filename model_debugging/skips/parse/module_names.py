"""Names a module binds exactly once, by a plain assignment at its top level: ``FLAG = True``,
``skip_me = unittest.skip("reason")``.

A decorator or a ``skipIf`` condition that uses such a name means the expression it is bound to,
as it does when the module runs. A name bound anywhere else as well (in an ``if``, a loop, an
import, a ``def``, a ``global`` statement in a function, a second assignment) is left alone.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator, Sequence

import libcst as cst

from model_debugging.skips.parse.rules.nodes import dotted_name


def _bound_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _bound_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _bound_names(target.value)


def _statements(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(suite, cst.IndentedBlock):
        return suite.body
    return [cst.SimpleStatementLine(body=suite.body)]


def _bindings(statement: cst.BaseStatement) -> Iterator[str]:
    """Every name a module-level statement binds, in any of its blocks."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        yield statement.name.value
        return
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    yield from _bound_names(target.target)
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign, cst.Del)):
                yield from _bound_names(small.target)
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                small.names, cst.ImportStar
            ):
                for alias in small.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    yield (dotted_name(bound) or "").split(".")[0]
        return
    if isinstance(statement, cst.For):
        yield from _bound_names(statement.target)
    elif isinstance(statement, cst.With):
        for item in statement.items:
            if item.asname is not None:
                yield from _bound_names(item.asname.name)
    suites = [getattr(statement, "body", None)]
    for part in (getattr(statement, "orelse", None), getattr(statement, "finalbody", None)):
        if isinstance(part, cst.If):  # elif
            yield from _bindings(part)
        elif part is not None:
            suites.append(part.body)
    for handler in getattr(statement, "handlers", ()):
        if handler.name is not None:
            yield from _bound_names(handler.name.name)
        suites.append(handler.body)
    for suite in suites:
        if isinstance(suite, cst.BaseSuite):
            for inner in _statements(suite):
                yield from _bindings(inner)


class _Globals(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Global(self, node: cst.Global) -> None:
        self.names.update(item.name.value for item in node.names)


def _declared_global(module: cst.Module, source: str, tree: ast.Module | None) -> set[str]:
    """The names a ``global`` statement in a function declares: found in Python's own tree of the
    whole source when there is one (a libcst visit of the module costs about twenty times more)."""
    if "global" not in source:
        return set()
    if tree is not None:
        return {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
    found = _Globals()
    module.visit(found)
    return found.names


def names_bound_once(
    module: cst.Module, source: str, tree: ast.Module | None = None
) -> dict[str, cst.BaseExpression]:
    """``name -> expression`` for the names ``module`` binds once, by ``name = expression`` written
    as a statement of its top level. ``tree`` is ``ast.parse(source)`` when the caller has it."""
    counts = Counter(name for statement in module.body for name in _bindings(statement))
    counts.update({name: 2 for name in _declared_global(module, source, tree)})
    bound = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name) and counts[target.value] == 1:
                    bound[target.value] = small.value
    return bound
