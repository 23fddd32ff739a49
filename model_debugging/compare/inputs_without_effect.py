"""Inputs passed in another form while nothing computed from them differs.

A hand-written port often passes a value in another form than its reference: a mask it builds
inside attention where the reference passes a 4-D mask, ``None`` where the reference passes a mask
that blocks nothing, rotary tables of another layout. Such inputs cannot be compared value by value
(tensors of shapes no form of :mod:`.forms` reconciles, a tensor against a literal), yet the call is
right when everything it computes agrees. So when those are all that differs in a call's inputs,
they are set aside (kept as notes, not counted) if the call shows no effect of them:

- a call without children whose outputs were compared and agree;
- a call with children at least one of which was compared by its outputs, every call inside it
  agreeing (after this same rule is applied to them).

What a call computes after its last child is not recorded; if it used the differing input there, the
next call receives different inputs and is not set aside, so the difference is still found (its
origin is then the call before it, see :mod:`.origin`). Values that were compared and differ are
never set aside (a difference below tolerance after a call is still a difference before it), nor
are the model's own inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.call_result import ModuleComparison, ModuleStatus
from model_debugging.compare.row_tree import parent_rows
from model_debugging.compare.rows import in_another_form, inputs_set_aside

WITHOUT_EFFECT = "not counted: nothing computed in this call differs"


def set_aside_inputs_without_effect(
    alignment: TraceAlignment, rows: Sequence[ModuleComparison]
) -> list[ModuleComparison]:
    """``rows`` with the input differences of the calls that show no effect of them set aside."""
    rows = list(rows)
    parents = parent_rows(alignment)
    agreed_inside = [False] * len(rows)  # a call inside was compared by its outputs, which agree
    differs_inside = [False] * len(rows)  # a call inside differs
    for row in reversed(range(len(rows))):  # every call inside a row comes after it
        parent = parents[row]
        if parent is None:  # the model's own inputs
            continue
        if _shows_no_effect(rows[row], agreed_inside[row], differs_inside[row]):
            rows[row] = inputs_set_aside(rows[row], WITHOUT_EFFECT)
        current = rows[row]
        agreed_inside[parent] |= agreed_inside[row] or (
            current.compared == "outputs" and current.status is ModuleStatus.EQUAL
        )
        differs_inside[parent] |= differs_inside[row] or current.status is not ModuleStatus.EQUAL
    return rows


def _shows_no_effect(row: ModuleComparison, agreed_inside: bool, differs_inside: bool) -> bool:
    differing = row.differing_inputs
    if not differing or not all(map(in_another_form, differing)) or row.outputs_match is False:
        return False
    if row.is_leaf:
        return row.outputs_match is True
    return agreed_inside and not differs_inside
