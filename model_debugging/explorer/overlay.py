"""One tree for a comparison: the reference's calls, coloured by the compare result, with the
candidate's unmatched calls shown where they ran (under their matched parent, after their
preceding sibling)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from model_debugging.compare.call_result import AlignmentKind, ModuleStatus
from model_debugging.compare.matching import describe_call
from model_debugging.explorer.calls import CallView
from model_debugging.explorer.comparison_view import CallComparison, CallStatus, PairedValue, divergence_level

if TYPE_CHECKING:
    from model_debugging.compare.call_result import ModuleComparison
    from model_debugging.compare.result import TraceComparison

# a row of the merged tree: ("reference", index) or ("candidate", index) into that side's calls
_Side = Literal["reference", "candidate"]
_RowKey = tuple[_Side, int]
_REFERENCE: _Side = "reference"
_CANDIDATE: _Side = "candidate"


@dataclass(frozen=True)
class OverlaidTree:
    """The merged rows in pre-order, and where the origin and the first input divergence sit in them."""

    calls: tuple[CallView, ...]
    origin: int | None
    first_input_divergence: int | None


def _call_key(call: CallView) -> tuple[str, int]:
    return call.node.module_path, call.node.call_index


def _reference_comparisons(
    row_of: dict[tuple[str, int], int], candidate: list[CallView], result: TraceComparison
) -> tuple[dict[int, CallComparison], dict[tuple[str, int], int]]:
    """Each matched reference row's comparison, and the reference row of each matched candidate call."""
    candidate_calls_by_key = {_call_key(call): call for call in candidate}
    comparisons: dict[int, CallComparison] = {}
    candidate_rows: dict[tuple[str, int], int] = {}
    candidate_calls: Counter[str] = Counter()
    for module in result.modules:
        row = row_of.get((module.module_path, module.call_index))
        if row is None:  # not a call of the reference trace: nowhere to show it in this tree
            continue
        diverged = module.status is not ModuleStatus.EQUAL
        candidate_key = (module.candidate_path, candidate_calls[module.candidate_path])
        counterpart = candidate_calls_by_key.get(candidate_key)
        comparisons[row] = CallComparison(
            status=CallStatus.DIVERGED if diverged else CallStatus.EQUAL,
            level=divergence_level(module.max_abs_diff, result.atol) if diverged else 0,
            verdict=module.status.value,
            candidate_path=module.candidate_path,
            candidate_class=None if counterpart is None else counterpart.node.module_class,
            max_abs_diff=module.max_abs_diff,
            max_rel_diff=module.max_rel_diff,
            mean_abs_diff=module.mean_abs_diff,
            details=tuple(module.details),
            alignment=None if module.alignment is AlignmentKind.PATH else module.alignment.value,
            notes=tuple(module.notes),
            values=tuple(_paired_values(module, counterpart)),
        )
        candidate_rows[candidate_key] = row
        candidate_calls[module.candidate_path] += 1
    return comparisons, candidate_rows


def _paired_values(module: ModuleComparison, counterpart: CallView | None) -> list[PairedValue]:
    """The values compare paired for ``module``, each with the candidate's tensor view."""
    views = {}
    if counterpart is not None:
        views = {("inputs", view.record.sub_path): view for view in counterpart.inputs}
        views.update({("outputs", view.record.sub_path): view for view in counterpart.outputs or ()})
    return [
        PairedValue(
            place=value.place,
            reference=value.reference,
            candidate_at=value.candidate,
            status=value.status.value,
            paired_by=value.paired_by,
            form=value.form,
            counted=value.counted,
            max_abs_diff=value.max_abs_diff,
            note=value.note,
            candidate=views.get((value.place, value.candidate)),
        )
        for value in module.values
    ]


def _unpaired(call: CallView, listed: frozenset[str], status: CallStatus) -> CallComparison:
    """A call with no comparison of its own: ``status`` when the result lists it among the unmatched
    calls, else a call with children looked through (the code it adds is not compared on its own),
    or a leaf the alignment accounts for (a part of a fused projection, an identity call)."""
    if describe_call(call.node) in listed:
        return CallComparison(status)
    return CallComparison(CallStatus.LOOKED_THROUGH if call.outputs is None else CallStatus.ACCOUNTED)


def _children_with_candidate_only(
    reference: list[CallView], candidate: list[CallView], candidate_rows: dict[tuple[str, int], int]
) -> dict[_RowKey, list[_RowKey]]:
    children: dict[_RowKey, list[_RowKey]] = {}
    for index, call in enumerate(reference):
        if call.parent >= 0:
            children.setdefault((_REFERENCE, call.parent), []).append((_REFERENCE, index))
    merged_key: dict[int, _RowKey] = {}  # candidate index -> its row in the merged tree
    last_child: dict[int, _RowKey] = {}  # candidate parent index -> merged key of its latest child
    for index, call in enumerate(candidate):
        matched = candidate_rows.get(_call_key(call))
        if matched is not None:
            merged_key[index] = (_REFERENCE, matched)
        else:
            merged_key[index] = (_CANDIDATE, index)
            parent = merged_key.get(call.parent, (_REFERENCE, 0))
            siblings = children.setdefault(parent, [])
            previous = last_child.get(call.parent)
            position = siblings.index(previous) + 1 if previous in siblings else 0
            siblings.insert(position, merged_key[index])
        last_child[call.parent] = merged_key[index]
    return children


def overlay_comparison(
    reference: list[CallView], candidate: list[CallView], result: TraceComparison
) -> OverlaidTree:
    """The merged tree of ``reference`` and the calls only ``candidate`` made, coloured by ``result``."""
    row_of = {_call_key(call): index for index, call in enumerate(reference)}
    comparisons, candidate_rows = _reference_comparisons(row_of, candidate, result)
    children = _children_with_candidate_only(reference, candidate, candidate_rows)
    only_reference, only_candidate = (
        frozenset(result.unmatched_reference),
        frozenset(result.unmatched_candidate),
    )
    rows: list[CallView] = []
    position: dict[_RowKey, int] = {}
    stack: list[tuple[_RowKey, int]] = [((_REFERENCE, 0), -1)]
    while stack:
        key, parent = stack.pop()
        side, index = key
        position[key] = len(rows)
        if side == _REFERENCE:
            call = reference[index]
            comparison = comparisons.get(index) or _unpaired(call, only_reference, CallStatus.UNMATCHED)
        else:
            call = candidate[index]
            comparison = _unpaired(call, only_candidate, CallStatus.CANDIDATE_ONLY)
        call = replace(call, parent=parent, comparison=comparison)
        rows.append(call)
        stack.extend((child, position[key]) for child in reversed(children.get(key, [])))

    def merged_row(module: ModuleComparison | None) -> int | None:
        row = None if module is None else row_of.get((module.module_path, module.call_index))
        return None if row is None else position[(_REFERENCE, row)]

    return OverlaidTree(
        calls=tuple(rows),
        origin=merged_row(result.divergence_origin),
        first_input_divergence=merged_row(result.first_input_divergence),
    )
