"""Python's method resolution order (C3 linearization), for test classes and library classes alike."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Class = TypeVar("Class", bound=Hashable)


def c3_linearization(
    head: Class, base_orders: Sequence[Sequence[Class]], bases: Sequence[Class]
) -> tuple[Class, ...]:
    """``head`` followed by the C3 merge of its bases' linearizations (``base_orders``) and the bases
    themselves, as Python computes ``__mro__``.

    When no order satisfies C3 (Python would refuse the class), the first occurrence of each class,
    taken depth first along the lists, stands instead: the analyzer reads the rest of such a file
    rather than giving up on it.
    """
    lists = [list(order) for order in base_orders] + [list(bases)]
    result = [head]
    while any(lists):
        found = next(
            (items[0] for items in lists if items and not any(items[0] in other[1:] for other in lists)),
            None,
        )
        if found is None:
            for items in lists:
                result += [item for item in items if item not in result]
            break
        result.append(found)
        lists = [[item for item in items if item != found] for items in lists]
    return tuple(result)
