"""Which module calls of two traces correspond: by path after rename rules, then inferred.

Calls whose module paths are equal after the rename rules are paired first (a module called
several times pairs call by call). Then, under every pair of calls with children, the children
left unpaired are aligned automatically (:mod:`.siblings`, with :mod:`.kinds` and :mod:`.evidence`):

- a leaf whose only output equals its input (dropout in eval mode, ``nn.Identity``) drops out;
- a call with children that finds no partner is looked through: its children join its parent's
  (so is a pair of such calls whose inputs disagree, when looking through pairs better, and a
  call paired with only a part of what it computes, :mod:`.wrappers`);
- one call whose output has the shape of several calls' outputs concatenated pairs with them as a
  fused (or split) projection (:mod:`.fused`);
- leaves that shapes alone cannot tell apart pair by their values, whatever their order, or as
  their twins in an earlier numbered block did, where values confirmed it (:mod:`.block_twins`);
- the rest pair by execution order where kinds, shapes and dtypes agree, values confirming.

Leaves still left over are then paired across levels (:mod:`.leftovers`). To map the modules of a
port to the reference's: ``align_traces("reference/", "port/").path_map()``.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from model_debugging.compare.block_twins import BlockTwins, fused_as_twins, twin_pairs
from model_debugging.compare.call_result import AlignmentKind
from model_debugging.compare.call_tree import CallTree
from model_debugging.compare.evidence import Evidence
from model_debugging.compare.leftovers import leftover_pairs, why_unaligned
from model_debugging.compare.matching import describe_call, match_keys
from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.renames import RenameRule, RenameSpec, coerce_rename_rules
from model_debugging.compare.siblings import Item, group_projections, item_of, pair_by_value, pair_items
from model_debugging.compare.wrappers import wrappers_of_parts
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import Trace

__all__ = ["AlignmentKind", "CallPair", "TraceAlignment", "align_traces"]

_VALUE_CHECKED_PAIRS = 64  # leaf pairs whose values are read per sequence pair, at most (then: order, shapes)


@dataclass(frozen=True)
class CallPair:
    """Calls (indices into each trace's nodes) that compute the same thing; several on one side
    only for fused and split projections."""

    kind: AlignmentKind
    reference: tuple[int, ...]
    candidate: tuple[int, ...]


@dataclass(frozen=True)
class TraceAlignment:
    """The pairs (in the reference's execution order), the identity calls that dropped out, and
    the calls on each side that nothing accounts for."""

    reference: CallTree
    candidate: CallTree
    rules: tuple[RenameRule, ...]
    pairs: tuple[CallPair, ...]
    identity_reference: tuple[int, ...]
    identity_candidate: tuple[int, ...]
    unaligned_reference: tuple[int, ...]
    unaligned_candidate: tuple[int, ...]
    inferred: bool  # False with --no_align: paths and rename rules only

    @property
    def from_shapes_only(self) -> bool:
        """Whether only shapes, dtypes, order and statistics were available (a summary trace)."""
        return "stats" in (self.reference.trace.mode, self.candidate.trace.mode)

    def path_map(self) -> dict[str, tuple[str, ...]]:
        """Reference module path -> the candidate module paths that compute the same thing."""
        mapping: dict[str, tuple[str, ...]] = {}
        for pair in self.pairs:
            candidates = tuple(self.candidate.node(index).module_path for index in pair.candidate)
            for index in pair.reference:
                mapping.setdefault(self.reference.node(index).module_path, candidates)
        return mapping

    def unaligned_reason(self) -> str | None:
        """One line: how many calls could not be aligned, the first of each side and why."""
        parts = []
        for side, tree, other, unaligned in (
            ("reference", self.reference, "candidate", self.unaligned_reference),
            ("candidate", self.candidate, "reference", self.unaligned_candidate),
        ):
            top = [index for index in unaligned if tree.parent[index] not in unaligned]
            if not top:
                continue
            first = tree.node(top[0])
            paired = {
                call
                for pair in self.pairs
                for call in (pair.reference if side == "reference" else pair.candidate)
            }
            why = (
                "paths and rename rules only (--no_align)"
                if not self.inferred
                else why_unaligned(tree, top[0], other, paired)
            )
            parts.append(f"{len(top)} {side} call(s), first {describe_call(first)}: {why}")
        return "could not align " + "; ".join(parts) if parts else None


def align_traces(
    reference: str | os.PathLike | Trace,
    candidate: str | os.PathLike | Trace,
    *,
    rename: RenameSpec = None,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    infer: bool = True,
) -> TraceAlignment:
    """Pair the module calls of two traces: by path after ``rename``, then (``infer``) automatically.

    Args:
        reference, candidate: traces (a directory, a trace JSON file, or an already read `Trace`).
        rename (*optional*): rename rules, as `compare_traces` takes them.
        atol, rtol (`float`): the tolerance of the identity check (an output equal to the input).
        infer (`bool`, *optional*, defaults to `True`): False pairs by path and rename rules only.

    Returns:
        `TraceAlignment`; `path_map()` maps reference module paths to candidate ones.
    """
    traces = [side if isinstance(side, Trace) else read_trace(side) for side in (reference, candidate)]
    mode = "tensors" if traces[0].mode == traces[1].mode == "tensors" else "stats"
    return align_calls(*traces, coerce_rename_rules(rename), PairComparer(atol, rtol, mode), infer=infer)


def align_calls(
    reference: Trace, candidate: Trace, rules: Sequence[RenameRule], comparer: PairComparer, *, infer: bool
) -> TraceAlignment:
    """:func:`align_traces` on read traces, with the comparer the caller compares with."""
    aligner = _Aligner(CallTree.of(reference), CallTree.of(candidate), comparer)
    candidate_by_key = dict(zip(match_keys(candidate, rules), range(len(candidate.nodes)), strict=True))
    for index, key in enumerate(match_keys(reference, rules)):
        partner = candidate_by_key.pop(key, None)
        if partner is not None:
            aligner.add(CallPair(AlignmentKind.PATH, (index,), (partner,)))
    if infer:
        aligner.infer()
        aligner.pair_leftovers()
    return aligner.result(tuple(rules), infer)


class _Aligner:
    def __init__(self, reference: CallTree, candidate: CallTree, comparer: PairComparer):
        self.trees = (reference, candidate)
        self.evidence = Evidence((reference, candidate), comparer)
        self.twins = (BlockTwins(reference), BlockTwins(candidate))
        self.pairs: list[CallPair] = []
        self.partner: tuple[dict[int, int], dict[int, int]] = ({}, {})  # 1:1 pairs, each side -> other
        self.grouped: tuple[set[int], set[int]] = (set(), set())  # members of fused/split pairs
        self.fused: tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]] = (
            {},
            {},
        )  # one call -> parts
        self.identity: tuple[set[int], set[int]] = (set(), set())
        # modules with a call paired by path: their other calls are real extra calls, never identities
        self.paired_modules: tuple[set[str], set[str]] = (set(), set())

    def add(self, pair: CallPair) -> None:
        self.pairs.append(pair)
        if pair.kind is AlignmentKind.PATH:
            for side, calls in enumerate((pair.reference, pair.candidate)):
                self.paired_modules[side].add(self.trees[side].node(calls[0]).module_path)
        if len(pair.reference) == len(pair.candidate) == 1:
            self.partner[0][pair.reference[0]] = pair.candidate[0]
            self.partner[1][pair.candidate[0]] = pair.reference[0]
        else:
            self.grouped[0].update(pair.reference)
            self.grouped[1].update(pair.candidate)
            single = 0 if len(pair.reference) == 1 else 1
            self.fused[single][(pair.reference, pair.candidate)[single][0]] = (
                pair.reference,
                pair.candidate,
            )[1 - single]

    def infer(self) -> None:
        reference, candidate = self.trees
        pending = deque(
            (pair.reference[0], pair.candidate[0])
            for pair in self.pairs
            if not reference.is_leaf(pair.reference[0]) and not candidate.is_leaf(pair.candidate[0])
        )
        while pending:
            for pair in self._align_children(*pending.popleft()):
                self.add(pair)
                if not reference.is_leaf(pair.reference[0]) and not candidate.is_leaf(pair.candidate[0]):
                    pending.append((pair.reference[0], pair.candidate[0]))

    def pair_leftovers(self) -> None:
        """Pair the leaves the tree alignment left over, across levels (:mod:`.leftovers`)."""
        for kind, reference, candidate in leftover_pairs(
            *self.trees, self.partner[0], self._free, self.evidence.outputs_agree
        ):
            self.add(CallPair(kind, reference, candidate))

    def _free(self, side: int, index: int) -> bool:
        return (
            index not in self.partner[side]
            and index not in self.grouped[side]
            and index not in self.identity[side]
        )

    def _align_children(self, reference_parent: int, candidate_parent: int) -> list[CallPair]:
        """Pair the free children of two paired calls. A call with children left unpaired is looked
        through (its children join the sequence) on the side where that pairs the best; so is a
        pair of calls with children whose inputs disagree, when looking through pairs better (a
        reference's norm-and-attention wrapper against a port's attention alone)."""
        scopes = ([reference_parent], [candidate_parent])
        outcome = self._pair_scopes(scopes)
        while True:
            wrappers = wrappers_of_parts(outcome.found, self.trees, self.partner[0], self._children_paired)
            if any(wrappers):
                scopes = tuple(scope + wrappers[side] for side, scope in enumerate(scopes))
                outcome = self._pair_scopes(scopes)
                continue
            forced = any(outcome.opaque)
            extra = outcome.opaque if forced else outcome.weak
            if not any(extra):
                break
            options = [
                tuple(scope + (extra[side] if side in sides else []) for side, scope in enumerate(scopes))
                for sides in ((0,), (1,), (0, 1))
                if any(extra[side] for side in sides)
            ]
            outcomes = [self._pair_scopes(option) for option in options]
            if forced:
                best = max(range(len(options)), key=lambda option: (outcomes[option].weight, -option))
            else:  # only when the values confirm more pairs: after a bug no input agrees, and
                # looking through would merely pair more calls by shapes
                best = max(range(len(options)), key=lambda option: (outcomes[option].confirmed, -option))
                if outcomes[best].confirmed <= outcome.confirmed:
                    break
            scopes, outcome = options[best], outcomes[best]
        return [
            _pair_of(left, right) for left, right in outcome.found if left.calls[0] not in self.partner[0]
        ]

    def _pair_scopes(self, scopes: Sequence[list[int]]) -> _Outcome:
        """The pairs among the children of ``scopes``, their weight, and per side the unpaired calls
        with children and the calls with children paired although their inputs disagree."""
        sequences = self._sequences(scopes)
        by_value = pair_by_value(*sequences, self.partner, self.evidence.values_agree, _VALUE_CHECKED_PAIRS)
        by_value += twin_pairs(
            self.twins, self.trees, sequences, self.partner, self.evidence.agreement, by_value
        )
        if by_value:  # paired whatever their order; the rest pair by order
            taken = ({left.calls for left, _ in by_value}, {right.calls for _, right in by_value})
            sequences = [
                [item for item in sequences[side] if item.calls not in taken[side]] for side in (0, 1)
            ]
        by_order, weight = pair_items(sequences[0], sequences[1], self.partner[0], self._weight)
        found = by_value + by_order
        paired = ({item.calls for item, _ in found}, {item.calls for _, item in found})
        opaque = tuple(
            [
                item.calls[0]
                for item in sequences[side]
                if not item.is_leaf
                and item.calls not in paired[side]
                and item.calls[0] not in self.partner[side]
            ]
            for side in (0, 1)
        )
        weak = [
            (left, right)
            for left, right in found
            if not left.is_leaf
            and left.calls[0] not in self.partner[0]
            and not self.evidence.agreement(left, right)[0]
        ]
        weak_calls = ([left.calls[0] for left, _ in weak], [right.calls[0] for _, right in weak])
        confirmed = sum(
            self._weight(left, right) - 1 for left, right in by_order if left.calls[0] not in self.partner[0]
        )
        return _Outcome(found, weight + 5 * len(by_value), confirmed + 4 * len(by_value), opaque, weak_calls)

    def _children_paired(self, calls: tuple[int, int]) -> int:
        """How many of the children of two calls pair by kinds and shapes alone."""
        sequences = self._sequences(([calls[0]], [calls[1]]))
        return len(pair_items(*sequences, self.partner[0], lambda left, right: 1)[0])

    def _weight(self, left: Item, right: Item) -> int:
        """1 for a pair shapes allow; more when the values confirm it (first inputs: +2; outputs of leaves: +2)."""
        inputs_agree, outputs_agree = self.evidence.agreement(left, right)
        return 1 + 2 * inputs_agree + 2 * (left.is_leaf and outputs_agree)

    def _sequences(self, scopes: Sequence[list[int]]) -> list[list[Item]]:
        """Per side, the children of ``scopes`` (:meth:`_sequence`), fused projections grouped."""
        sequences = [self._sequence(side, scopes[side]) for side in (0, 1)]
        return [
            group_projections(
                sequences[side],
                self.trees[side],
                sequences[1 - side],
                set(self.partner[side]),
                lambda first, other, side=side: self.evidence.same_input(side, first, other),
                lambda other, run, side=side: self._fused_confirmed(side, other, run),
            )
            for side in (0, 1)
        ]

    def _fused_confirmed(self, side: int, other: Item, run: tuple[int, ...]) -> bool:
        """Whether the calls ``run`` of ``side`` are the parts of ``other`` (one call of the other side):
        as their twins were in an earlier block, or their inputs and concatenated outputs agree."""
        if fused_as_twins(self.twins[1 - side], self.twins[side], self.fused[1 - side], other.calls[0], run):
            return True
        group = item_of(self.trees[side], run)
        return all(self.evidence.agreement(*((group, other) if side == 0 else (other, group))))

    def _sequence(self, side: int, scope: list[int]) -> list[Item]:
        """The free children (and anchored ones) of the calls in ``scope``, in execution order;
        identity leaves are set aside."""
        tree = self.trees[side]
        children = sorted(child for parent in scope for child in tree.children[parent] if child not in scope)
        items = []
        for child in children:
            if child in self.partner[side]:
                items.append(item_of(tree, (child,)))
            elif self._free(side, child):
                if (
                    tree.is_leaf(child)
                    and tree.node(child).module_path not in self.paired_modules[side]
                    and self.evidence.is_identity(tree, child)
                ):
                    self.identity[side].add(child)
                else:
                    items.append(item_of(tree, (child,)))
        return items

    def result(self, rules: tuple[RenameRule, ...], inferred: bool) -> TraceAlignment:
        accounted = [self._accounted(side, strict=not inferred) for side in (0, 1)]
        return TraceAlignment(
            reference=self.trees[0],
            candidate=self.trees[1],
            rules=rules,
            pairs=tuple(sorted(self.pairs, key=lambda pair: min(pair.reference))),
            identity_reference=tuple(sorted(self.identity[0])),
            identity_candidate=tuple(sorted(self.identity[1])),
            unaligned_reference=tuple(i for i, ok in enumerate(accounted[0]) if not ok),
            unaligned_candidate=tuple(i for i, ok in enumerate(accounted[1]) if not ok),
            inferred=inferred,
        )

    def _accounted(self, side: int, *, strict: bool) -> list[bool]:
        """Per call: paired, an identity, or (inferring) a call with children that was looked
        through: one with a paired call inside (what it computes is compared there)."""
        tree = self.trees[side]
        accounted = [not self._free(side, index) for index in range(len(tree.trace.nodes))]
        if not strict:
            paired = [
                not self._free(side, index) and index not in self.identity[side]
                for index in range(len(accounted))
            ]
            for index in reversed(range(len(accounted))):
                if tree.children[index]:
                    paired[index] = paired[index] or any(paired[child] for child in tree.children[index])
                    accounted[index] = accounted[index] or paired[index]
        return accounted


@dataclass(frozen=True)
class _Outcome:
    found: list[tuple[Item, Item]]
    weight: int
    confirmed: int  # the part of the weight the values give (pairs whose inputs or outputs agree)
    opaque: tuple[list[int], list[int]]  # unpaired calls with children, per side
    weak: tuple[list[int], list[int]]  # calls with children paired although their inputs disagree


def _pair_of(reference: Item, candidate: Item) -> CallPair:
    if len(reference.calls) > 1:
        kind = AlignmentKind.FUSED
    elif len(candidate.calls) > 1:
        kind = AlignmentKind.SPLIT
    else:
        kind = AlignmentKind.INFERRED
    return CallPair(kind, reference.calls, candidate.calls)
