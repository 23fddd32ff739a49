"""Name the value that left a condition undecided: the innermost part of it only the run knows.

``if baseline_grad is None or ...: skip`` is undecided because ``baseline_grad``, bound to
``embedding_param.grad``, is only known after a backward pass: the explanation says that, rather
than repeating the condition. The parts of the condition are evaluated again on the variables the
test had when it met the condition (a copy: nothing the test holds changes).
"""

from __future__ import annotations

import ast

from model_debugging.skips.runtime.model_calls import ModelOutputs
from model_debugging.skips.runtime.values import Signal, Tensor, Unknown

# Comprehensions bind their own names: only their first iterable is evaluated in the test's scope.
_COMPREHENSIONS = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)


def explain(evaluate, condition: ast.AST, variables: dict[str, object]) -> str:
    """Which value keeps ``condition`` (an ``if``'s test or a loop) from being known, and why.

    ``evaluate(node, variables)`` is the evaluator of the test (``Evaluator.value``). Returns "" when
    every part of the condition is known (the doubt then comes from elsewhere)."""
    node = condition.iter if isinstance(condition, ast.For) else getattr(condition, "test", condition)
    if not isinstance(node, ast.expr):
        return ""
    scope = dict(variables)
    found = _unknown_part(evaluate, node, scope)
    if found is None:
        return ""
    part, value = found
    origin = value.node if isinstance(value, Unknown) and value.node is not None else None
    if isinstance(part, ast.Name) and origin is not None and ast.unparse(origin) != part.id:
        return f"`{part.id}` (= `{ast.unparse(origin)}`) {_why(origin, value)}"
    outputs = [
        item
        for item in getattr(part, "comparators", ())
        if isinstance(_value(evaluate, item, scope), ModelOutputs)
    ]
    if isinstance(part, ast.Compare) and outputs:
        return f"which outputs `{ast.unparse(outputs[0])}` holds is only known by running the model"
    return f"`{ast.unparse(part)}` {_why(part, value)}"


def _why(node: ast.expr, value: object) -> str:
    if isinstance(node, ast.Attribute) and node.attr == "grad":
        return "is only known after a backward pass"
    if isinstance(value, Tensor):
        return "holds values only known at run time"
    if isinstance(node, ast.Name) and isinstance(value, Unknown) and value.source == node.id:
        return "is set by code the analyzer does not follow"
    return "is only known at run time"


def _value(evaluate, node: ast.expr, variables: dict[str, object]) -> object:
    try:
        return evaluate(node, variables)
    except Signal:  # the part calls a helper that skips or cannot be followed: it is the doubt
        return Unknown(node=node)


def _unknown_part(evaluate, node: ast.expr, variables: dict[str, object]) -> tuple[ast.expr, object] | None:
    """``(part, its value)`` for the innermost unknown part of ``node`` whose own parts are known."""
    value = _value(evaluate, node, variables)
    if not isinstance(value, Unknown):
        return None
    for child in _parts(node):
        found = _unknown_part(evaluate, child, variables)
        if found is not None:
            return found
    return node, value


def _parts(node: ast.expr) -> list[ast.expr]:
    """The sub-expressions of ``node`` evaluated in the same scope, in order."""
    if isinstance(node, _COMPREHENSIONS):
        return [node.generators[0].iter]
    if isinstance(node, ast.Lambda):
        return []
    if isinstance(node, ast.Call):
        owner = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        return [*owner, *node.args, *(keyword.value for keyword in node.keywords)]
    return [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)]
