"""The items a ``for`` loop or a comprehension goes through, when the interpreter knows them."""

from __future__ import annotations

MAX_ITERATIONS = 256  # a loop over more known items is left to the run
ITERABLE = (list, tuple, range, str, dict, set, frozenset)
RANGE_LENGTH = 1 << 16  # a longer ``range(...)`` is unknown: it may be made into a list


def loop_items(value: object) -> list[object] | None:
    """The items of ``value`` in Python's order (a dict's keys), or None when it is not a known
    iterable or holds more than :data:`MAX_ITERATIONS` items."""
    if not isinstance(value, ITERABLE) or len(value) > MAX_ITERATIONS:
        return None
    return list(value)
