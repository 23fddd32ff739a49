"""The arguments each case of a ``@parameterized.expand`` common test is called with, read statically.

The parameter list is often a module-level constant built from literals
(``TEST_EAGER_MATCHES_SDPA_INFERENCE_PARAMETERIZATION``: a comprehension over literal tuples, an
f-string name, ``*(...)`` unpacked into each tuple, a list added at the end). The interpreter
computes it as Python would when the class is defined: the module's assignments run in order up to
the class, each name holding its last value there. A result holding anything but literals (a call,
an attribute, a name bound otherwise than by a plain assignment) leaves the cases unknown. A
parameter that is not a tuple or a list is one argument, as ``parameterized`` takes it.
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.expressions import Evaluator
from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.interp.outside_tests import NoTestHelpers, no_helper
from model_debugging.skips.interp.values import Unknown
from model_debugging.skips.parse.ast_nodes import dotted_name

_EXPAND = "parameterized.expand"
_SCALARS = (str, int, float, bool, type(None))


class _ModuleScope(NoTestHelpers):
    """What the interpreter reads of a module's top level: no API is modelled, no method is run."""

    handlers = Handlers()  # empty: a value of an API is unknown


def case_arguments(function: ast.FunctionDef, module: ast.Module) -> tuple[tuple[object, ...], ...] | None:
    """The positional arguments (after ``self``) of each case ``expand`` makes of ``function`` (a
    method of a class of ``module``), in order; None when it is not expanded or its parameters are
    not computed from literals."""
    expression = _expand_argument(function)
    if expression is None:
        return None
    evaluator = Evaluator(_ModuleScope(), no_helper)
    parameters = evaluator.value(expression, _module_values(module, function, evaluator))
    if not isinstance(parameters, (list, tuple)) or not _literal(parameters):
        return None
    return tuple(tuple(item) if isinstance(item, (list, tuple)) else (item,) for item in parameters)


def _expand_argument(function: ast.FunctionDef) -> ast.expr | None:
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and dotted_name(decorator.func).endswith(_EXPAND)
            and len(decorator.args) == 1
            and not decorator.keywords
        ):
            return decorator.args[0]
    return None


def _module_values(module: ast.Module, function: ast.FunctionDef, evaluator: Evaluator) -> dict[str, object]:
    """The module's names as they are when the class holding ``function`` is defined: a plain
    assignment's value, computed in order; unknown for a name any other statement binds."""
    values: dict[str, object] = {}
    for statement in module.body:
        if isinstance(statement, ast.ClassDef) and function in statement.body:
            break
        if isinstance(statement, ast.Assign) and all(
            isinstance(target, ast.Name) for target in statement.targets
        ):
            value = evaluator.value(statement.value, values)
            values.update((target.id, value) for target in statement.targets)
        else:
            values.update((name, Unknown(name)) for name in _bound_names(statement))
    return values


def _bound_names(statement: ast.stmt) -> set[str]:
    """The module-level names a statement other than a plain assignment binds."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    names = {
        node.id
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(statement.name)
    return names


def _literal(value: object) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_literal(item) for item in value)
    return isinstance(value, _SCALARS)
