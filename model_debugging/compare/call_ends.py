"""The end of a call with children, judged from what the next call receives.

The debugger records no outputs for a call with children, so code after its last recorded call (an
attention that halves what ``o_proj`` returns, an MLP that scales after ``down_proj``) changes
nothing recorded inside it: everything in it agrees, and the first difference shows in the inputs
of the next call of its parent. That call may also differ because the parent's own code between the
two is wrong (a residual taken from the wrong tensor). The values tell the two apart.

In the reference, the next call receives the last recorded call's output as it was handed on: the
same tensor, or that plus a tensor recorded before it (the residual its parent adds). When the
candidate's next call received neither (its counterpart of that last output, alone or plus any
tensor the candidate recorded before), the output was changed on its way out: at the end of the
innermost paired call that the last call ends, or of the calls ending with it. When it did, the
output left the call intact and the parent's code combined it otherwise.

A summary trace (``use_repr=True``) holds no tensor files: there the statistics and printed values
tell (:mod:`.summary_sums`). When they can neither confirm what the reference hands on nor refute
every way the candidate's output could have been handed on, the end is *undecided*: the caller
names it as a place to look, beside its parent's own code, and says a full-tensor trace would tell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.call_result import ModuleComparison
from model_debugging.compare.call_tree import CallTree, tensor_records
from model_debugging.compare.fused import first_tensor
from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.row_tree import rows_of_calls
from model_debugging.compare.summary_sums import Relation, summed_relation
from model_debugging.debugger.trace_format.records import TensorRecord
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor

_RESIDUALS = 64  # recorded tensors tried as the residual, per side, at most


@dataclass(frozen=True)
class ChangedEnd:
    """Row ``row``'s call changed what its last recorded call (row ``last``) returned, on its way to
    the next call; ``enclosing``: the reference calls that end with it (indices into its nodes),
    innermost first, up to the paired call the walk reached."""

    row: int
    last: int
    enclosing: tuple[int, ...]
    decided: bool = True  # False: a summary trace cannot tell whether it changed it (full tensors would)


def last_paired_inside(alignment: TraceAlignment, row: int) -> int | None:
    """The pair of the last paired call inside ``row``'s call (None when it has none)."""
    tree = alignment.reference
    call = alignment.pairs[row].reference[0]
    inside = [
        (other.reference[0], index)
        for index, other in enumerate(alignment.pairs)
        if other.reference[0] != call and tree.contains(call, other.reference[0])
    ]
    return max(inside)[1] if inside else None


def find_changed_end(
    alignment: TraceAlignment,
    rows: Sequence[ModuleComparison],
    outer: int,
    previous: int,
    following: int,
    comparer: PairComparer,
) -> ChangedEnd | None:
    """Whether the difference in the inputs of row ``following`` was made at the end of row
    ``previous``'s call (everything recorded in it agrees), the paired call before it inside row
    ``outer``'s: the innermost paired call it ends with its last recorded call (``decided`` False when
    only a summary trace's statistics were there to tell), or None."""
    if rows[previous].is_leaf:
        return None
    pairs, tree = alignment.pairs, alignment.reference
    last = last_paired_inside(alignment, previous)
    if last is None or not rows[last].is_leaf:
        return None
    if (len(pairs[last].reference), len(pairs[last].candidate)) != (1, 1):  # a fused projection
        return None
    chain = _ended_by(alignment, last, pairs[previous].reference[0])
    if not chain:
        return None
    row_of_call = rows_of_calls(alignment)
    innermost = next(position for position, call in enumerate(chain) if call in row_of_call)
    rows_used = (outer, previous, following, last)
    calls = [[pairs[row].reference[0] for row in rows_used], [pairs[row].candidate[0] for row in rows_used]]
    changed = ChangedEnd(row_of_call[chain[innermost]], last, tuple(chain[innermost + 1 :]), decided=False)
    undecided = False
    for value in rows[following].differing_inputs:
        # both sides within the reference's own rounding of the received tensor, when measured
        received = _received(tree, calls[0][2], value.reference)
        tolerance = None if received is None else comparer.noise_tolerance(received)
        reference = _handed_on(tree, calls[0], value.reference, comparer, tolerance)
        if reference in (None, Relation.REFUTED):  # it hands on something else: nothing to judge by
            continue
        candidate = _handed_on(alignment.candidate, calls[1], value.candidate, comparer, tolerance)
        if reference is Relation.HOLDS and candidate is Relation.REFUTED:
            return replace(changed, decided=True)
        # full tensors could find it changed, where the summaries leave a side unknown
        undecided = undecided or (
            candidate in (Relation.REFUTED, Relation.UNKNOWN) and Relation.UNKNOWN in (reference, candidate)
        )
    return changed if undecided else None


def _ended_by(alignment: TraceAlignment, last: int, outermost: int) -> list[int]:
    """The calls from ``last``'s parent up to ``outermost`` that ``last`` ends (nothing but identity
    calls after it inside them), innermost first; [] when one of them runs more after it."""
    tree = alignment.reference
    chain, call = [], tree.parent[alignment.pairs[last].reference[0]]
    start = alignment.pairs[last].reference[0]
    while call >= 0:
        if any(index not in alignment.identity_reference for index in range(start + 1, tree.end[call])):
            return []
        chain.append(call)
        if call == outermost:
            return chain
        call = tree.parent[call]
    return []


def _received(tree: CallTree, call: int, sub_path: str | None) -> TensorRecord | None:
    return next((r for r in tensor_records(tree.node(call).inputs) if r.sub_path == sub_path), None)


def _handed_on(
    tree: CallTree,
    calls: list[int],
    sub_path: str | None,
    comparer: PairComparer,
    tolerance: tuple[float, float] | None,
) -> Relation | None:
    """Whether the input ``sub_path`` of call ``following`` is the output of call ``last``, or that
    plus a tensor recorded before (an input of ``outer``, of its calls before ``following``, or of a
    call inside ``previous``): from the tensor files, else from a summary trace's statistics (which
    may leave it unknown). None when no trace could tell (no such tensors, other shapes). ``tolerance``
    (atol, rtol) replaces the comparer's own for the tensor files."""
    outer, previous, following, last = calls
    received = _received(tree, following, sub_path)
    made = first_tensor(tree.node(last).outputs)
    if received is None or made is None or received.shape != made.shape or received.dtype != made.dtype:
        return None
    residuals = _recorded_before(tree, outer, previous, following, made)
    if received.file is None or made.file is None:
        if comparer.mode == "tensors":  # a tensor no file could hold
            return None
        relations = [
            summed_relation(received, made, residual, comparer.atol, comparer.rtol)
            for residual in (None, *residuals)
        ]
        if Relation.HOLDS in relations:
            return Relation.HOLDS
        return Relation.REFUTED if set(relations) == {Relation.REFUTED} else Relation.UNKNOWN
    given, output = read_recorded_tensor(received), read_recorded_tensor(made)
    if comparer.compare_tensors(output, given, tolerance)[0] or any(
        comparer.compare_tensors(output, given - read_recorded_tensor(residual), tolerance)[0]
        for residual in residuals
        if residual.file is not None
    ):
        return Relation.HOLDS
    return Relation.REFUTED


def residual_sources(tree: CallTree, outer: int, holder: int, following: int) -> list[int]:
    """The calls whose inputs may hold the residual added to what ``holder`` (a call of ``outer``, or one
    inside it) hands to ``following``: ``outer``, its children before ``following``, and every call
    inside ``holder``. Replay asks the same of what a candidate's module returns."""
    calls = [outer, *(child for child in tree.children[outer] if child < following)]
    return list(dict.fromkeys([*calls, *range(holder + 1, tree.end[holder])]))


def _recorded_before(
    tree: CallTree, outer: int, previous: int, following: int, like: TensorRecord
) -> list[TensorRecord]:
    """The input tensors shaped like ``like`` of the calls where a residual is recorded."""
    found = [
        record
        for call in residual_sources(tree, outer, previous, following)
        for record in tensor_records(tree.node(call).inputs)
        if record.shape == like.shape and record.dtype == like.dtype
    ]
    return found[:_RESIDUALS]
