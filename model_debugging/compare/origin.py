"""The divergence origin: the innermost matched call whose inputs agree and whose outputs differ.

The debugger records outputs only for calls without children, so a call with children "differs"
when a matched call inside it differs. Starting from the model, the walk goes down into the first
such call (in execution order) as long as the inputs agree:

- a leaf whose outputs differ (or that raised on one side only) is the origin;
- a call with children whose first differing child already received different inputs is the
  origin: the difference is made inside it, by its own code or by its calls left unaligned, before
  that child. The note says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.matching import describe_call
from model_debugging.compare.result import AlignmentKind, ModuleComparison, ModuleStatus

_NAMED = 4  # unaligned calls named in the note; the rest are counted


def find_origin(
    alignment: TraceAlignment, rows: Sequence[ModuleComparison]
) -> tuple[ModuleComparison | None, str | None]:
    """The origin row (marked as differing when it has children) and a note on where inside it to look."""
    parents = _parent_rows(alignment)
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
        for child in children[current]:
            if not rows[child].inputs_match:
                note = _note(alignment, current, child)
                return _marked(rows[current], note, rows[child]), note
            if inside[child]:
                current = child
                break
            if rows[child].outputs_match is False:
                return rows[child], None
        else:
            note = _note(alignment, current, None)
            return _marked(rows[current], note, None), note


def _parent_rows(alignment: TraceAlignment) -> list[int | None]:
    """Per row, the row of the nearest enclosing call paired one to one (None for the outermost)."""
    tree = alignment.reference
    row_of_call = {
        pair.reference[0]: row for row, pair in enumerate(alignment.pairs) if len(pair.reference) == 1
    }
    parents: list[int | None] = []
    for pair in alignment.pairs:
        call = tree.parent[pair.reference[0]]
        while call >= 0 and call not in row_of_call:
            call = tree.parent[call]
        parents.append(row_of_call.get(call))
    return parents


def _marked(row: ModuleComparison, note: str, evidence: ModuleComparison | None) -> ModuleComparison:
    """``row`` (a call with children) marked as differing; its differences become those of the
    first call inside it that received different inputs, which its first detail names."""
    if row.is_leaf or row.outputs_match is False:
        return row
    if evidence is None:
        return replace(row, outputs_match=False, details=(note, *row.details))
    labels = ", ".join(value.label for value in evidence.differing_inputs[:3]) or "its inputs"
    return replace(
        row,
        outputs_match=False,
        details=(f"inside it, the inputs of {evidence.module_path} differ: {labels}", *row.details),
        compared=evidence.compared,
        max_abs_diff=evidence.max_abs_diff,
        max_rel_diff=evidence.max_rel_diff,
        mean_abs_diff=evidence.mean_abs_diff,
    )


def _note(alignment: TraceAlignment, row: int, first_differing: int | None) -> str:
    pair = alignment.pairs[row]
    reference, candidate = alignment.reference, alignment.candidate
    where = reference.node(pair.reference[0]).module_path
    if first_differing is None:
        text = f"the difference is made inside {where}"
    else:
        call = alignment.pairs[first_differing].reference[0]
        child = reference.node(call).module_path
        text = f"the difference is made inside {where}, before {child} (the first call in it whose inputs differ)"
        parent = reference.parent[call]
        if parent != pair.reference[0] and parent >= 0:  # a call the candidate has no counterpart of
            text += f", in the code of {reference.node(parent).module_path} (no counterpart in the candidate)"
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
    # the calls left unaligned inside it that ran before the first call whose inputs differ
    before = (
        (len(reference.trace.nodes), len(candidate.trace.nodes))
        if first_differing is None
        else (alignment.pairs[first_differing].reference[0], alignment.pairs[first_differing].candidate[0])
    )
    unaligned = [
        describe_call(tree.node(index))
        for tree, call, indices, limit in (
            (reference, pair.reference[0], alignment.unaligned_reference, before[0]),
            (candidate, pair.candidate[0], alignment.unaligned_candidate, before[1]),
        )
        for index in indices
        if tree.contains(call, index) and tree.parent[index] not in indices and index < limit
    ]
    if unaligned:
        named = ", ".join(unaligned[:_NAMED]) + (
            f" and {len(unaligned) - _NAMED} more" if len(unaligned) > _NAMED else ""
        )
        return f"{text}: among its calls left unaligned ({named}) or in its own code"
    return f"{text}: in its own code"
