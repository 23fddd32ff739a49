"""Calls paired with only a part of what they compute, found by structure.

A reference's ``T5LayerSelfAttention`` runs a norm, the attention, dropout and the residual; a
port's attention module runs the attention alone, its block running the norm and the residual.
Both take a tensor of the same shape and give one, so shapes and execution order alone may pair
them, and after a bug no value tells them apart. Their children do: the port's attention pairs
with the children of the reference's inner ``SelfAttention`` (q, k, v, o), not with the wrapper's
(a norm and a call with children). Such a wrapper is looked through instead of paired: its
children join its parent's, where its norm meets the port's and its sublayer the port's module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from model_debugging.compare.call_tree import CallTree
from model_debugging.compare.siblings import Item, compatible, item_of


def wrappers_of_parts(
    found: Sequence[tuple[Item, Item]],
    trees: tuple[CallTree, CallTree],
    anchors: Mapping[int, int],
    children_paired: Callable[[tuple[int, int]], int],
) -> tuple[list[int], list[int]]:
    """Per side, the calls of ``found`` (pairs of items) that wrap what their partner computes: a
    child of theirs pairs with the partner's children better than they do (``children_paired(
    (reference, candidate))``: how many children of two calls pair by kinds and shapes). Pairs
    with a leaf, and ``anchors`` (reference calls paired by path), are kept as they are."""
    wrappers: tuple[list[int], list[int]] = ([], [])
    for left, right in found:
        if left.is_leaf or right.is_leaf or left.calls[0] in anchors:
            continue
        calls = (left.calls[0], right.calls[0])
        for side in (0, 1):
            if _wraps(side, calls, trees, children_paired):
                wrappers[side].append(calls[side])
                break
    return wrappers


def _wraps(
    side: int,
    calls: tuple[int, int],
    trees: tuple[CallTree, CallTree],
    children_paired: Callable[[tuple[int, int]], int],
) -> bool:
    """Whether ``calls[side]`` holds a child that is the better counterpart of ``calls[1 - side]``."""
    tree, other = trees[side], 1 - side
    partner = item_of(trees[other], (calls[other],))
    direct = children_paired(calls)
    for child in tree.children[calls[side]]:
        if tree.is_leaf(child):
            continue
        inner = item_of(tree, (child,))
        if not (compatible(inner, partner) if side == 0 else compatible(partner, inner)):
            continue
        if children_paired((child, calls[1]) if side == 0 else (calls[0], child)) > direct:
            return True
    return False
