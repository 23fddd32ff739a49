"""The arguments each case of a ``@parameterized.expand`` common test is called with, read statically.

The parameter list is often a module-level constant built from literals
(``TEST_EAGER_MATCHES_SDPA_INFERENCE_PARAMETERIZATION``: a comprehension over literal tuples, an
f-string name, ``*(...)`` unpacked into each tuple, a list added at the end). Such an expression is
computed here from literals alone; anything else (a call, an attribute, a name that is not a
module-level constant or a loop variable) leaves the cases unknown. A parameter that is not a tuple
or a list is one argument, as ``parameterized`` takes it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_EXPAND = "parameterized.expand"


class _NotLiteral(Exception):
    """The expression holds something only a run can compute."""


def case_arguments(function: ast.FunctionDef, module: ast.Module) -> tuple[tuple[object, ...], ...] | None:
    """The positional arguments (after ``self``) of each case ``expand`` makes of ``function``, in
    order; None when it is not expanded or its parameters are not computed from literals."""
    expression = _expand_argument(function)
    if expression is None:
        return None
    constants = {
        target.id: node.value
        for node in module.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    try:
        parameters = _value(expression, {}, constants)
    except (_NotLiteral, TypeError, ValueError, RecursionError):
        return None
    if not isinstance(parameters, (list, tuple)):
        return None
    return tuple(tuple(item) if isinstance(item, (list, tuple)) else (item,) for item in parameters)


def _expand_argument(function: ast.FunctionDef) -> ast.expr | None:
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func).endswith(_EXPAND)
            and len(decorator.args) == 1
            and not decorator.keywords
        ):
            return decorator.args[0]
    return None


def _value(node: ast.expr, scope: dict[str, object], constants: dict[str, ast.expr]) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        items: list[object] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                unpacked = _value(element.value, scope, constants)
                if not isinstance(unpacked, (list, tuple)):
                    raise _NotLiteral
                items += unpacked
            else:
                items.append(_value(element, scope, constants))
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        if node.id in constants:  # a module-level constant, computed in the module's scope
            # taken out while it is computed: a constant defined through itself is not literal
            expression = constants.pop(node.id)
            try:
                return _value(expression, {}, constants)
            finally:
                constants[node.id] = expression
        raise _NotLiteral
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _value(node.left, scope, constants) + _value(node.right, scope, constants)
    if isinstance(node, ast.IfExp):
        branch = node.body if _value(node.test, scope, constants) else node.orelse
        return _value(branch, scope, constants)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _value(node.operand, scope, constants)
    if isinstance(node, ast.JoinedStr):
        return "".join(_text_part(part, scope, constants) for part in node.values)
    if isinstance(node, ast.ListComp):
        return [
            _value(node.elt, inner, constants)
            for inner in _comprehension_scopes(node.generators, scope, constants)
        ]
    raise _NotLiteral


def _text_part(part: ast.expr, scope: dict[str, object], constants: dict[str, ast.expr]) -> str:
    if isinstance(part, ast.Constant):
        return str(part.value)
    if isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
        return str(_value(part.value, scope, constants))
    raise _NotLiteral


def _comprehension_scopes(
    generators: list[ast.comprehension], scope: dict[str, object], constants: dict[str, ast.expr]
) -> Iterator[dict[str, object]]:
    """The loop variables' values of every iteration, innermost loop fastest, ``if``s applied."""
    if not generators:
        yield scope
        return
    first, rest = generators[0], generators[1:]
    if first.is_async or not isinstance(first.target, ast.Name):
        raise _NotLiteral
    iterable = _value(first.iter, scope, constants)
    if not isinstance(iterable, (list, tuple)):
        raise _NotLiteral
    for item in iterable:
        inner = {**scope, first.target.id: item}
        if all(_value(test, inner, constants) for test in first.ifs):
            yield from _comprehension_scopes(rest, inner, constants)
