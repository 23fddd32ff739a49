"""Numbered blocks of one structure pair their calls alike: the pairing the values confirmed in an
earlier block is the pairing of a later one.

Inside a block whose inputs already differ (every block after a bug), values can no longer tell
same-shaped leaves apart, and execution order may mislead: a port's cross-attention that projects
the memory (``kv``) before the query (``q``) would pair the reference's ``q_proj`` with the port's
``out`` in every block after the first one. The first block, where the values still agreed, paired
them by value; the same places of a later block pair as it did.

A call's *twin* is the call at the same place in the lowest-numbered earlier block: its path with
one block number lowered (the innermost number that has an earlier block: ``block.1.layer.0.q`` has
the twin ``block.0.layer.0.q``). Module paths called more than once in the trace have no twin.

Fused projections pair alike: a later block's ``qkv`` is grouped with ``q_proj``, ``k_proj`` and
``v_proj`` when the first block's were, even where a projection of the same shapes (an MLP's
``fc1`` as wide as ``qkv``) would otherwise keep them apart (:func:`fused_as_twins`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from model_debugging.compare.call_tree import CallTree
from model_debugging.compare.siblings import Item, compatible, item_of


class BlockTwins:
    """Twins of the calls of one trace (see the module docstring)."""

    def __init__(self, tree: CallTree):
        counts = Counter(tree.relative_paths)
        self._index = {path: index for index, path in enumerate(tree.relative_paths) if counts[path] == 1}
        self._paths = tree.relative_paths

    def twin(self, index: int) -> tuple[int, int, str] | None:
        """``(twin, the block's number in the twin, its number in the call's path)``, or None."""
        parts = self._paths[index].split(".")
        for position in reversed(range(len(parts))):
            if not parts[position].isdigit():
                continue
            for number in range(int(parts[position])):
                found = self._index.get(".".join([*parts[:position], str(number), *parts[position + 1 :]]))
                if found is not None:
                    return found, number, parts[position]
        return None

    def renumbered(self, index: int, old: int, new: str) -> int | None:
        """The call whose path is ``index``'s with the one part that is the number ``old`` made ``new``."""
        parts = self._paths[index].split(".")
        positions = [position for position, part in enumerate(parts) if part == str(old)]
        if len(positions) != 1:
            return None
        parts[positions[0]] = new
        return self._index.get(".".join(parts))


def twin_pairs(
    twins: tuple[BlockTwins, BlockTwins],
    trees: tuple[CallTree, CallTree],
    sequences: Sequence[Sequence[Item]],
    partner: tuple[Mapping[int, int], Mapping[int, int]],
    agreement: Callable[[Item, Item], tuple[bool, bool]],
    made: Sequence[tuple[Item, Item]],
) -> list[tuple[Item, Item]]:
    """Pairs of the free single-call leaves of two sequences (the children of two paired calls,
    but those of the pairs ``made`` already) whose twins are a pair (``partner``: the 1:1 pairs,
    each side to the other) the values confirmed (``agreement``: their first inputs or outputs
    agree); each leaf at most once."""
    leaves = [
        {item.calls[0]: item for item in items if item.is_leaf and len(item.calls) == 1}
        for items in sequences
    ]
    taken = {left.calls for left, _ in made}
    free = {call for call in leaves[1] if call not in partner[1]} - {right.calls[0] for _, right in made}
    pairs = []
    for call, item in leaves[0].items():
        found = twins[0].twin(call) if call not in partner[0] and item.calls not in taken else None
        if found is None:
            continue
        twin, number, current = found
        other = partner[0].get(twin)
        if other is None or not any(agreement(item_of(trees[0], (twin,)), item_of(trees[1], (other,)))):
            continue
        target = twins[1].renumbered(other, number, current)
        if target in free and compatible(item, leaves[1][target]):
            free.discard(target)
            pairs.append((item, leaves[1][target]))
    return pairs


def fused_as_twins(
    single_twins: BlockTwins,
    parts_twins: BlockTwins,
    fused: Mapping[int, tuple[int, ...]],
    single: int,
    parts: tuple[int, ...],
) -> bool:
    """Whether the twin of ``single`` (a call of the trace of ``single_twins``) was paired as a fused or
    split projection (``fused``: such calls to their parts in the other trace) with the twins of
    ``parts`` (calls of the trace of ``parts_twins``): a later block's ``qkv`` and ``q_proj``,
    ``k_proj``, ``v_proj`` pair as the first block's did, whatever their values."""
    found = single_twins.twin(single)
    if found is None:
        return False
    twin, number, current = found
    group = fused.get(twin)
    return (
        group is not None and tuple(parts_twins.renumbered(call, number, current) for call in group) == parts
    )
