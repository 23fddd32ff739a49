"""Comprehensions (list, set, dict, generator) over known iterables, as Python runs them."""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.truth import known, truth
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
        target = generator.target
        names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", None)
        if not isinstance(iterable, (list, tuple, set, frozenset, str, dict)) or not (
            names and all(isinstance(name, ast.Name) for name in names)
        ):
            return False
        for item in iterable:
            if isinstance(target, ast.Name):
                inner = {**scope, target.id: item}
            elif isinstance(item, (tuple, list)) and len(item) == len(names):  # for k, v in d.items()
                inner = {**scope, **{name.id: value for name, value in zip(names, item, strict=True)}}
            else:
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
