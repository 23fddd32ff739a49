"""Comprehensions (list, set, dict, generator) over known iterables, as Python runs them."""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.iteration import ITERABLE
from model_debugging.skips.interp.truth import known, truth
from model_debugging.skips.interp.unpacking import unpacked
from model_debugging.skips.interp.values import Unknown, python_result


def comprehension(
    evaluate: Callable[[ast.expr, dict[str, object]], object],
    node: ast.expr,
    variables: dict[str, object],
    unknown: Unknown,
) -> object:
    """The value of the comprehension ``node`` (``evaluate`` gives an expression's value in a scope):
    ``unknown`` when an iterable, a target or a condition is not known."""
    results: list[object] = []

    def generate(index: int, scope: dict[str, object]) -> bool:
        if index == len(node.generators):
            if isinstance(node, ast.DictComp):
                results.append((evaluate(node.key, scope), evaluate(node.value, scope)))
            else:
                results.append(evaluate(node.elt, scope))
            return True
        generator = node.generators[index]
        iterable = evaluate(generator.iter, scope)
        if not isinstance(iterable, ITERABLE):
            return False
        for item in iterable:
            inner = _bound(generator.target, item, scope)
            if inner is None:
                return False
            conditions = [evaluate(condition, inner) for condition in generator.ifs]
            if not all(known(condition) for condition in conditions):
                return False
            if all(truth(condition) for condition in conditions) and not generate(index + 1, inner):
                return False
        return True

    if not generate(0, dict(variables)):
        return unknown
    if isinstance(node, ast.DictComp):
        keys = [key for key, _ in results]
        return (
            python_result(unknown, dict, results)
            if all(isinstance(key, (str, int)) for key in keys)
            else unknown
        )
    return python_result(unknown, set, results) if isinstance(node, ast.SetComp) else results


def _bound(target: ast.expr, item: object, scope: dict[str, object]) -> dict[str, object] | None:
    """``scope`` with the names of ``target`` bound to ``item`` (``for k, v in d.items()``); None
    when the target is not made of names or the item does not unpack into it."""
    if isinstance(target, ast.Name):
        return {**scope, target.id: item}
    if not isinstance(target, (ast.Tuple, ast.List)) or (items := unpacked(target.elts, item)) is None:
        return None
    for element, value in zip(target.elts, items, strict=True):
        scope = _bound(element.value if isinstance(element, ast.Starred) else element, value, scope)
        if scope is None:
            return None
    return scope
