"""The divergence origin: the innermost matched call whose inputs agree and whose outputs differ.

The debugger records outputs only for calls without children, so a call with children "differs"
when a matched call inside it differs. Starting from the model, the walk goes down into the first
such call (in execution order) as long as the inputs agree:

- a leaf whose outputs differ (or that raised on one side only) is the origin (with summary
  statistics, the note says its inputs may be reordered: a port flipping the pixel channels before
  its patch embedding differs first at that ``Conv2d``, whose inputs keep their statistics);
- a call with children whose first differing child already received different inputs is the
  origin: the difference is made inside it, by its own code or by its calls left unaligned, before
  that child. The note says which;
- when a call of the reference without a counterpart made what that child received (a norm the
  port forgets: see :mod:`.producers`), the note names it first;
- when the call before that child has children (its outputs are not recorded) and the child receives
  neither its last recorded call's output nor that plus a residual, as in the reference: the
  innermost call that last call ends is the origin, changed at its end (an attention that halves
  what ``o_proj`` returns; see :mod:`.call_ends`);
- otherwise, when the call before that child is a numbered block (``layers.3``) whose output is what
  differs in the child's inputs (the hidden states, by shape): a block's outputs are not recorded
  (it has children), so that block is the origin, and its end (a residual added after its last
  call) what the note names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.call_ends import ChangedEnd, find_changed_end, last_paired_inside
from model_debugging.compare.call_result import AlignmentKind, ModuleComparison, ModuleStatus
from model_debugging.compare.matching import describe_call
from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.producers import find_producer
from model_debugging.compare.row_tree import parent_rows

_NAMED = 4  # unaligned calls named in the note; the rest are counted
# a leaf origin found from summary statistics: its inputs may hold the same values in another order
_REORDERED = (
    "its inputs agree in summary statistics, which the same values in another order have too "
    "(channels flipped, rows and columns swapped): if its own code is right, check the order of "
    "what it receives, or trace both with use_repr=False to compare the values"
)


def find_origin(
    alignment: TraceAlignment, rows: Sequence[ModuleComparison], comparer: PairComparer
) -> tuple[ModuleComparison | None, str | None]:
    """The origin row (marked as differing when it has children) and a note on where inside it to look."""
    parents = parent_rows(alignment)
    children: list[list[int]] = [[] for _ in rows]
    inside = [False] * len(rows)  # a row below this one differs
    for row in reversed(range(len(rows))):
        parent = parents[row]
        if parent is not None:
            children[parent].insert(0, row)
            inside[parent] = inside[parent] or inside[row] or rows[row].status is not ModuleStatus.EQUAL
    current = next((row for row, parent in enumerate(parents) if parent is None), None)
    if current is None or not rows[current].inputs_match:
        return None, None
    if not inside[current] and rows[current].outputs_match is not False:
        return None, None
    while True:
        for position, child in enumerate(children[current]):
            if not rows[child].inputs_match:
                previous = children[current][position - 1] if position else None
                producer = find_producer(alignment, rows, current, child, comparer)
                if producer is not None:
                    note = _note(alignment, current, child, previous)
                    note = f"{producer.describe(alignment, rows[child].module_path)}; or else {note}"
                    return _marked(rows[current], note, rows[child]), note
                block_end = previous is not None and _block_output_differs(alignment, rows, previous, child)
                changed = (
                    None
                    if previous is None
                    else find_changed_end(alignment, rows, current, previous, child, comparer)
                )
                detail = f"its outputs are not recorded; the inputs of {rows[child].module_path}, the next call, differ"
                if changed is not None and block_end and changed.row == previous:
                    changed = None  # the block's own end: named below
                if changed is not None and changed.decided:
                    note = _changed_end_note(alignment, changed, child, comparer.mode == "stats")
                    return _marked(rows[changed.row], note, rows[child], detail), note
                undecided = "" if changed is None else _undecided_end(alignment, changed)
                if block_end:
                    note = _block_end_note(alignment, previous, child) + undecided
                    return _marked(rows[previous], note, rows[child], detail), note
                note = _note(alignment, current, child, previous) + undecided
                return _marked(rows[current], note, rows[child]), note
            if inside[child]:
                current = child
                break
            if rows[child].outputs_match is False:
                return rows[child], _REORDERED if comparer.mode == "stats" and rows[child].is_leaf else None
        else:
            note = _note(alignment, current, None)
            return _marked(rows[current], note, None), note


def _marked(
    row: ModuleComparison, note: str, evidence: ModuleComparison | None, detail: str | None = None
) -> ModuleComparison:
    """``row`` (a call with children) marked as differing; its differences become those of the
    call that received different inputs (inside it, unless ``detail`` says where), which its first
    detail names."""
    if row.is_leaf or row.outputs_match is False:
        return row
    if evidence is None:
        return replace(row, outputs_match=False, details=(note, *row.details))
    labels = ", ".join(value.label for value in evidence.differing_inputs[:3]) or "its inputs"
    first = next(iter(evidence.differing_inputs), None)
    if first is not None and first.form == "broadcast" and first.note:  # the part of it one side holds
        labels += f" ({first.note})"
    detail = detail or f"inside it, the inputs of {evidence.module_path} differ"
    return replace(
        row,
        outputs_match=False,
        details=(f"{detail}: {labels}", *row.details),
        compared=evidence.compared,
        max_abs_diff=evidence.max_abs_diff,
        max_rel_diff=evidence.max_rel_diff,
        mean_abs_diff=evidence.mean_abs_diff,
    )


def _block_output_differs(
    alignment: TraceAlignment, rows: Sequence[ModuleComparison], block: int, following: int
) -> bool:
    """Whether what differs in the inputs of ``following`` is likely the output of ``block``, the
    paired call just before it: a numbered block (``layers.0``) with children, whose outputs are
    not recorded, and a differing input of the shape of the block's first tensor input (the
    hidden states it passes on: to the next block, or to the final norm after the last)."""
    first, second = alignment.pairs[block], alignment.pairs[following]
    if len(first.reference) != 1 or len(second.reference) != 1:
        return False
    tree = alignment.reference
    node = tree.node(first.reference[0])
    if node.outputs is not None or not node.module_path.rpartition(".")[2].isdigit():
        return False
    stream = next((record.shape for record in node.inputs if record.is_tensor), None)
    differing = {value.reference for value in rows[following].differing_inputs}
    return any(
        record.sub_path in differing and record.shape == stream
        for record in tree.node(second.reference[0]).inputs
    )


def _block_end_note(alignment: TraceAlignment, block: int, following: int) -> str:
    tree = alignment.reference
    path = tree.node(alignment.pairs[block].reference[0]).module_path
    call = alignment.pairs[following].reference[0]
    between = f"in the code of {tree.node(tree.parent[call]).module_path} between it and {tree.node(call).module_path}"
    last = last_paired_inside(alignment, block)
    if last is None:
        return f"the difference is made at the end of {path} (everything recorded in it agrees): in its own code, or {between}"
    node = tree.node(alignment.pairs[last].reference[0])
    if node.outputs is not None:  # a leaf: its outputs agree
        unaligned = _unaligned_inside(alignment, block, None, after=last)
        among = f"among its calls left unaligned after it ({unaligned}) or " if unaligned else ""
        return (
            f"the difference is made at the end of {path}, after its last recorded call {describe_call(node)} "
            f"(everything recorded in it agrees): {among}in its own code, or {between}"
        )
    # its last call has calls of its own: its outputs are not recorded, so it may make the difference
    unaligned = _unaligned_inside(alignment, last, None)
    among = f": among its calls left unaligned ({unaligned}) or in its own code" if unaligned else ""
    return (
        f"the difference is made at the end of {path}: in its last recorded call {describe_call(node)}, whose "
        f"outputs are not recorded (its inputs agree){among}; or after it, in the code of {path}, or {between}"
    )


def _changed_end_note(alignment: TraceAlignment, changed: ChangedEnd, following: int, summary: bool) -> str:
    tree = alignment.reference
    path = tree.node(alignment.pairs[changed.row].reference[0]).module_path
    last = describe_call(tree.node(alignment.pairs[changed.last].reference[0]))
    call = alignment.pairs[following].reference[0]
    receiver = tree.node(call).module_path
    ends = "".join(f", or at the end of {tree.node(index).module_path}" for index in changed.enclosing)
    judged = " (told by the statistics and printed values of the summary traces)" if summary else ""
    return (
        f"the difference is made at the end of {path}, after its last recorded call {last} (everything recorded "
        f"in it agrees): {receiver} receives neither that call's output nor that plus a tensor recorded before it "
        f"(a residual), as in the reference{judged}: in its own code{ends}, or in the code of "
        f"{tree.node(tree.parent[call]).module_path} between it and {receiver}"
    )


def _undecided_end(alignment: TraceAlignment, changed: ChangedEnd) -> str:
    """The end of ``changed``'s call as another place to look, when summary traces cannot tell."""
    tree = alignment.reference
    path = tree.node(alignment.pairs[changed.row].reference[0]).module_path
    last = describe_call(tree.node(alignment.pairs[changed.last].reference[0]))
    return (
        f"; or at the end of {path}, after its last recorded call {last} (its outputs are not recorded): "
        "summary traces cannot tell which (traces recorded with use_repr=False would)"
    )


def _note(
    alignment: TraceAlignment, row: int, first_differing: int | None, previous: int | None = None
) -> str:
    """Where inside ``row``'s call the difference is made: before ``first_differing`` (the first
    call in it whose inputs differ), or at the end of ``previous``, the paired call before it, when
    that call has children (its outputs are not recorded; everything recorded in it agrees)."""
    pair = alignment.pairs[row]
    reference = alignment.reference
    where = reference.node(pair.reference[0]).module_path
    if first_differing is None:
        text = f"the difference is made inside {where}"
    else:
        call = alignment.pairs[first_differing].reference[0]
        child = reference.node(call).module_path
        text = f"the difference is made inside {where}, before {child} (the first call in it whose inputs differ)"
        text += _between(alignment, pair.reference[0], previous, call)
    if alignment.from_shapes_only:
        projections = [
            reference.node(other.reference[0]).module_path
            for other in alignment.pairs
            if other.kind in (AlignmentKind.FUSED, AlignmentKind.SPLIT)
            and reference.contains(pair.reference[0], other.reference[0])
        ]
        if projections:
            text += (
                f" (summary statistics cannot tell when the parts of a fused projection are in the wrong order: "
                f"check {', '.join(projections[:_NAMED])})"
            )
    unaligned = _unaligned_inside(alignment, row, first_differing)
    if unaligned:
        return f"{text}: among its calls left unaligned ({unaligned}) or in its own code"
    return f"{text}: in its own code"


def _between(alignment: TraceAlignment, outer: int, previous: int | None, call: int) -> str:
    """Where between the paired call ``previous`` (the last one inside ``outer`` that agrees) and
    ``call`` (the first whose inputs differ) the difference may be made, when code without a
    counterpart in the candidate runs there: the ends of ``previous`` and of its callers, and the
    code of ``call``'s callers inside ``outer``, outermost first (a LLaVA port merging the image
    features in its own forward differs in the code of the reference's ``model``, which calls its
    ``language_model``, which calls the first layer). "" when ``call``'s caller is ``outer`` and
    nothing ends between."""
    reference = alignment.reference
    before = None if previous is None else reference.node(alignment.pairs[previous].reference[0])
    callers, ancestor = [], reference.parent[call]
    while ancestor != outer and ancestor >= 0:
        callers.insert(0, reference.node(ancestor).module_path)
        ancestor = reference.parent[ancestor]
    unpaired_parent = bool(callers)
    code = f"in the code of {' or of '.join(callers)} (no counterpart in the candidate)"
    ended = [] if previous is None else _ended_between(alignment, outer, previous, call)
    if not ended:
        text = f", {code}" if unpaired_parent else ""
        if unpaired_parent and before is not None and before.outputs is None:
            text += f" or at the end of {before.module_path} (its outputs are not recorded)"
        return text
    agrees = "its outputs agree" if before.outputs is not None else "everything recorded in it agrees"
    text = f", after {describe_call(before)} ({agrees}), at the end of "  # in execution order
    if unpaired_parent and before.outputs is None:
        text += f"{before.module_path} (its outputs are not recorded), of "
    text += f"{' or of '.join(ended)} (no counterpart in the candidate; outputs not recorded)"
    return text + (f", or {code}" if unpaired_parent else "")


def _ended_between(alignment: TraceAlignment, outer: int, previous: int, call: int) -> list[str]:
    """The calls without a counterpart that hold the call of pair ``previous`` (inside ``outer``)
    but not ``call``, the next paired call, innermost first: they end between the two, and their
    outputs are not recorded (a ViT port that adds the position embeddings in its own forward
    differs at the end of the reference's ``embeddings``, after its agreeing patch projection)."""
    reference = alignment.reference
    ended = []
    ancestor = reference.parent[alignment.pairs[previous].reference[0]]
    while ancestor > outer and not reference.contains(ancestor, call):
        ended.append(reference.node(ancestor).module_path)
        ancestor = reference.parent[ancestor]
    return ended


def _unaligned_inside(
    alignment: TraceAlignment, row: int, first_differing: int | None, after: int | None = None
) -> str:
    """The calls left unaligned inside ``row``'s call (on either side) that ran before the first
    call whose inputs differ (and after the pair ``after``), described ("" when there are none)."""
    pair, reference, candidate = alignment.pairs[row], alignment.reference, alignment.candidate
    before = (
        (len(reference.trace.nodes), len(candidate.trace.nodes))
        if first_differing is None
        else (alignment.pairs[first_differing].reference[0], alignment.pairs[first_differing].candidate[0])
    )
    since = (
        (-1, -1)
        if after is None
        else (alignment.pairs[after].reference[-1], alignment.pairs[after].candidate[-1])
    )
    unaligned = [
        describe_call(tree.node(index))
        for tree, call, indices, start, limit in (
            (reference, pair.reference[0], alignment.unaligned_reference, since[0], before[0]),
            (candidate, pair.candidate[0], alignment.unaligned_candidate, since[1], before[1]),
        )
        for index in indices
        if tree.contains(call, index) and tree.parent[index] not in indices and start < index < limit
    ]
    return ", ".join(unaligned[:_NAMED]) + (
        f" and {len(unaligned) - _NAMED} more" if len(unaligned) > _NAMED else ""
    )
