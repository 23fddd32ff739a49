"""Finish a skip reason for the class that skips: placeholders known only per test class.

A reason written as an f-string in a common test is read once (``parse/rules/nodes.py`` marks what it
cannot evaluate as ``<unevaluated: expression>``); the test class and its ``all_model_classes``
are known when a model's class is analyzed, so these placeholders are filled in then.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

from model_debugging.skips.records.literals import UNEVALUATED, NonLiteral, unevaluated
from model_debugging.skips.records.outcome import Outcome
from model_debugging.skips.resolve.classes import ClassRef, Resolver

_CLASS_NAME = ("self.__class__.__name__", "type(self).__name__", "self.__class__.__qualname__")
_FIRST_MODEL_CLASS = "self.all_model_classes[0].__name__"


def _first_model_class(resolver: Resolver, linearization: tuple[ClassRef, ...]) -> str | None:
    """The first name listed in ``all_model_classes`` (``(A, B) if is_torch_available() else ()``)."""
    value, _ = resolver.class_attribute(linearization, "all_model_classes")
    if not isinstance(value, NonLiteral):
        return None
    try:
        expression = ast.parse(value.code, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(expression, ast.IfExp):
        expression = expression.body
    if isinstance(expression, (ast.Tuple, ast.List)) and expression.elts:
        first = expression.elts[0]
        if isinstance(first, ast.Name):
            return first.id
        if isinstance(first, ast.Attribute):
            return first.attr
    return None


def with_class_placeholders(
    resolver: Resolver,
    linearization: tuple[ClassRef, ...],
    outcome: Outcome,
    first_model_class: Callable[[], str | None] | None = None,
) -> Outcome:
    """``outcome`` with the class-dependent placeholders of its skip reason filled in;
    ``first_model_class`` names the class's first model class when ``all_model_classes`` is no
    literal list (a tester that lists them by naming convention)."""
    if outcome.skip is None or UNEVALUATED not in outcome.skip.reason:
        return outcome
    reason = outcome.skip.reason
    for expression in _CLASS_NAME:
        reason = reason.replace(unevaluated(expression), outcome.test_class or "")
    if unevaluated(_FIRST_MODEL_CLASS) in reason:
        first = _first_model_class(resolver, linearization)
        if first is None and first_model_class is not None:
            first = first_model_class()
        if first is not None:
            reason = reason.replace(unevaluated(_FIRST_MODEL_CLASS), first)
    return replace(outcome, skip=replace(outcome.skip, reason=reason))
