"""An f-string's placeholder formatted as Python formats it, or marked unevaluated."""

from __future__ import annotations

from collections.abc import Callable

from model_debugging.skips.interp.truth import text
from model_debugging.skips.interp.values import Unknown, python_result
from model_debugging.skips.records.literals import UNEVALUATED

# ``!r``, ``!s``, ``!a`` (and none) of an f-string's placeholder, by ``ast.FormattedValue.conversion``
_CONVERSIONS: dict[int, Callable[[object], object]] = {
    -1: lambda value: value,
    114: repr,
    115: str,
    97: ascii,
}
_SCALARS = (str, int, float, bool, type(None))
_CONTAINERS = (tuple, list, set, frozenset, dict)


def _printed_as_written(value: object) -> bool:
    """A string, a number, None, or a container of them: what ``format`` prints as the run would."""
    if isinstance(value, dict):
        return all(_printed_as_written(key) and _printed_as_written(item) for key, item in value.items())
    if isinstance(value, _CONTAINERS):
        return all(_printed_as_written(item) for item in value)
    return isinstance(value, _SCALARS)


def formatted(value: object, conversion: int, spec: object, unknown: Unknown) -> str:
    """``value`` under its placeholder's ``conversion`` (``!r``) and format ``spec`` (``:.2f``; None
    when none is written), applied to strings, numbers, None and containers of them. A value the run
    would print otherwise (a container holding a class or a value only the run knows; a class or an
    unknown value under a conversion or a spec) is marked unevaluated (``unknown`` names it)."""
    if conversion == -1 and spec is None and not isinstance(value, _CONTAINERS):
        return text(value)  # a class reads as ``<class 'X'>``, an unknown value as unevaluated
    spec = "" if spec is None else spec
    if not _printed_as_written(value) or not isinstance(spec, str) or UNEVALUATED in spec:
        return text(unknown)
    return text(python_result(unknown, format, _CONVERSIONS[conversion](value), spec))
