"""What the interpreter knows of a value's truth, and how a value is written into a reason.

Three truth values, in the style of mypy's ``reachability.py``: a condition is always true, always
false, or of a truth only the run knows. Every value but :class:`Unknown` (and its kinds) has a
known truth: Python's own for plain values, the declared names for a signature's parameters, true
for any other object the interpreter stands for (a class, a module, a configuration).
"""

from __future__ import annotations

from enum import Enum

from model_debugging.skips.interp.values import (
    PLAIN,
    ConfigClass,
    ModelClass,
    ModelInstance,
    OfKnownTruth,
    Parameters,
    Unknown,
)
from model_debugging.skips.records.literals import unevaluated

_SCALARS = frozenset({str, int, float, bool, type(None)})


class Truth(Enum):
    ALWAYS_TRUE = "always true"
    ALWAYS_FALSE = "always false"
    TRUTH_VALUE_UNKNOWN = "truth value unknown"


INVERTED_TRUTH = {
    Truth.ALWAYS_TRUE: Truth.ALWAYS_FALSE,
    Truth.ALWAYS_FALSE: Truth.ALWAYS_TRUE,
    Truth.TRUTH_VALUE_UNKNOWN: Truth.TRUTH_VALUE_UNKNOWN,
}


def known(value: object) -> bool:
    return not isinstance(value, Unknown)


def wholly_known(value: object) -> bool:
    """A known value, and for a tuple, list, set or dict every item (and key) of it, all the way down:
    what Python's own ``==`` and ``in`` may be asked about."""
    if type(value) in _SCALARS:
        return True
    if isinstance(value, dict):
        return all(wholly_known(key) and wholly_known(item) for key, item in value.items())
    if isinstance(value, (tuple, list, set, frozenset)):
        return all(wholly_known(item) for item in value)
    return known(value)


def truth(value: object) -> bool:
    """``bool(value)`` of a known value."""
    if isinstance(value, Parameters):
        return bool(value.names)
    return bool(value) if isinstance(value, PLAIN) else True


def truth_of(value: object) -> Truth:
    """The truth of ``value`` as a condition."""
    if isinstance(value, OfKnownTruth):
        return Truth.ALWAYS_TRUE if value.truth else Truth.ALWAYS_FALSE
    if not known(value):
        return Truth.TRUTH_VALUE_UNKNOWN
    return Truth.ALWAYS_TRUE if truth(value) else Truth.ALWAYS_FALSE


def text(value: object) -> str:
    """``str(value)`` as a skip reason shows it; an unknown part reads ``<unevaluated: its code>``."""
    if isinstance(value, Unknown):  # as the rules write it: the test class's name is filled in per class
        return unevaluated(value.code)
    if isinstance(value, (ModelClass, ModelInstance, ConfigClass)):
        return f"<class '{value.info.name}'>"
    return str(value)


def comparable(value: object) -> bool:
    """Values whose equality is identity of the class they stand for."""
    return isinstance(value, (ModelClass, ConfigClass, str, int, type(None)))
