"""Aligning the children of two matched calls by execution order, kinds, shapes and values.

Each side is a sequence of *items* in execution order: one call, or a group of leaf calls that
together match one call of the other side (a fused or split projection). Two items may pair when
both are leaves or both have children, their kinds are compatible (:mod:`.kinds`: a norm never
pairs with a projection), a numbered block with children (``layers.3``, ``h.0``) pairs with a
numbered block only (never with an encoder, whose first layer gets the same inputs as it: a port
without the encoder has its blocks there; nor with a part of the other side's block), their first
tensor inputs have the same shape and dtype (or one broadcasts to the other: position ids
``[1, 8]`` against ``[2, 8]``), and (leaves) their tensor outputs too, or the fewer of them some of
the other's (:func:`.arguments.returned_part`: a router returning two of the reference's three). Among all order-preserving
pairings, the one of the greatest weight wins (a longest common subsequence, weighted): a pair
whose first inputs agree in value weighs more, and for leaves one whose outputs agree too, so that
the pairing the values confirm beats one that shapes alone allow. Calls already paired by path are
anchors: they pair only with their partner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from model_debugging.compare.arguments import returned_part
from model_debugging.compare.call_tree import CallTree, tensor_records
from model_debugging.compare.forms import flattened
from model_debugging.compare.fused import (
    TensorSignature,
    find_fusable_run,
    first_tensor,
    signature,
    single_output,
)
from model_debugging.compare.kinds import compatible_kinds, kind_of

_ANCHOR_WEIGHT = 10_000  # a path pair always wins over any number of inferred pairs it would cross


@dataclass(frozen=True)
class Item:
    """One call, or a fused group of leaf calls, with what decides its partner."""

    calls: tuple[int, ...]
    is_leaf: bool
    input: TensorSignature
    outputs: tuple[TensorSignature, ...]
    kind: str | None = None
    block: bool = False  # a numbered block (CallTree.is_block)
    numbered: bool = False  # a call with children at a numbered path (``experts.3``)


def item_of(tree: CallTree, calls: tuple[int, ...]) -> Item:
    node = tree.node(calls[0])
    if len(calls) == 1:
        outputs = tuple(signature(record) for record in tensor_records(node.outputs))
    else:  # a group: its outputs concatenated on the last dimension
        parts = [signature(single_output(tree, index)) for index in calls]
        shape = (*parts[0][0][:-1], sum(part[0][-1] for part in parts))
        outputs = ((shape, parts[0][1]),)
    return Item(
        calls,
        tree.is_leaf(calls[0]),
        signature(first_tensor(node.inputs)),
        outputs,
        kind_of(node),
        tree.is_block(calls[0]),
        not tree.is_leaf(calls[0]) and tree.relative_paths[calls[0]].rpartition(".")[2].isdigit(),
    )


def compatible(left: Item, right: Item) -> bool:
    if left.is_leaf != right.is_leaf or not _alike(left.input, right.input):
        return False
    if not compatible_kinds(left.kind, right.kind):
        return False
    if not left.is_leaf:
        # one expert of a port's list (``experts.2``, given the one token routed to it) is not the
        # reference's ``experts`` module running them all
        return left.block == right.block and left.numbered == right.numbered
    if returned_part(left.outputs, right.outputs) is not None:  # a router's (weights, indices) of three
        return True
    return len(left.outputs) == len(right.outputs) and all(
        _alike(one, other) for one, other in zip(left.outputs, right.outputs, strict=True)
    )


def _alike(left: TensorSignature, right: TensorSignature) -> bool:
    """The same shape and dtype, or one of the shapes broadcasting to the other in as many
    dimensions (position ids ``[1, 8]`` against ``[2, 8]``, expanded to the batch), or the tokens
    flattened (``[20, 32]`` against ``[2, 10, 32]``: a router or an expert of a mixture of experts)."""
    if left == right:
        return True
    if left is not None and right is not None and left[1] == right[1] and flattened(left[0], right[0]):
        return True
    if left is None or right is None or left[1] != right[1] or len(left[0]) != len(right[0]):
        return False
    sizes = list(zip(left[0], right[0], strict=True))
    return all(one in (1, other) for one, other in sizes) or all(other in (1, one) for one, other in sizes)


def group_projections(
    items: list[Item],
    tree: CallTree,
    others: Sequence[Item],
    anchored: set[int],
    same_input: Callable[[int, int], bool],
    confirmed: Callable[[Item, tuple[int, ...]], bool],
) -> list[Item]:
    """``items`` with runs of leaf calls grouped where one item of ``others`` matches the run's
    concatenated outputs (``same_input(a, b)``: whether calls ``a`` and ``b`` of ``tree`` got the
    same first input, as the parts of a projection do) and has no partner of its own among ``items``,
    or has one (a projection of the same shapes) but ``confirmed(other, run)``: the values or an
    earlier block say the run is its parts (a fused ``qkv`` as wide as the MLP's ``fc1``)."""
    for other in others:
        if not other.is_leaf or len(other.calls) > 1 or len(other.outputs) != 1:
            continue
        rival = any(compatible(item, other) for item in items)
        pool = [
            item.calls[0]
            for item in items
            if len(item.calls) == 1
            and item.is_leaf
            and item.calls[0] not in anchored
            and compatible_kinds(item.kind, other.kind)
        ]
        run = find_fusable_run(other.outputs[0], other.input, tree, pool, same_input)
        if run is None or (rival and not confirmed(other, run)):
            continue
        position = next(i for i, item in enumerate(items) if item.calls[0] == run[0])
        items = [item for item in items if item.calls[0] not in run]
        items.insert(position, item_of(tree, run))
    return items


def pair_items(
    reference: Sequence[Item],
    candidate: Sequence[Item],
    anchors: Mapping[int, int],
    weight: Callable[[Item, Item], int],
) -> tuple[list[tuple[Item, Item]], int]:
    """The order-preserving pairing of the two sequences of the greatest weight (anchors first),
    and that weight without the anchors'. ``weight`` gives a compatible pair's weight (>= 1)."""
    anchored_candidates = set(anchors.values())  # calls paired by path pair with their partner only
    cache: dict[tuple[int, int], int] = {}

    def score(i: int, j: int) -> int:
        if (i, j) not in cache:
            left, right = reference[i], candidate[j]
            partner = anchors.get(left.calls[0])
            if partner is not None or right.calls[0] in anchored_candidates:
                cache[i, j] = _ANCHOR_WEIGHT if partner == right.calls[0] else 0
            else:
                cache[i, j] = weight(left, right) if compatible(left, right) else 0
        return cache[i, j]

    rows, columns = len(reference), len(candidate)
    best = [[0] * (columns + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(columns - 1, -1, -1):
            gain = score(i, j)
            paired = best[i + 1][j + 1] + gain if gain else 0
            best[i][j] = max(paired, best[i + 1][j], best[i][j + 1])
    pairs, total, i, j = [], 0, 0, 0
    while i < rows and j < columns:
        gain = score(i, j)
        if gain and best[i][j] == best[i + 1][j + 1] + gain:
            pairs.append((reference[i], candidate[j]))
            total += gain if gain != _ANCHOR_WEIGHT else 0
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs, total


def pair_by_value(
    reference: list[Item],
    candidate: list[Item],
    partner: tuple[Mapping[int, int], Mapping[int, int]],
    values_agree: Callable[[int, int], bool],
    most: int,
) -> list[tuple[Item, Item]]:
    """Pairs of leaves that shapes alone cannot tell apart (several of the same shapes on a side)
    and whose values agree one to one (``values_agree(reference call, candidate call)``), whatever
    their order: a port may call two same-shaped projections in another order. Values are read only
    for such leaves (not in ``partner``, the 1:1 pairs of each side), and only when at most ``most``
    pairs are in question."""
    leaves = [
        [
            item
            for item in items
            if item.is_leaf and len(item.calls) == 1 and item.calls[0] not in partner[side]
        ]
        for side, items in enumerate((reference, candidate))
    ]
    candidates = [(left, right) for left in leaves[0] for right in leaves[1] if compatible(left, right)]
    ambiguous = [
        (left, right)
        for left, right in candidates
        if sum(pair[0] is left for pair in candidates) > 1 or sum(pair[1] is right for pair in candidates) > 1
    ]
    if len(ambiguous) > most:
        return []
    agreeing = [(left, right) for left, right in ambiguous if values_agree(left.calls[0], right.calls[0])]
    return [
        (left, right)
        for left, right in agreeing
        if sum(pair[0] is left for pair in agreeing) == 1 and sum(pair[1] is right for pair in agreeing) == 1
    ]
