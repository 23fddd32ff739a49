"""One row of the comparison per pair of calls: how their inputs and outputs compare.

Every pair is compared the same way, whether its calls were paired by path (with or without rename
rules) or by the alignment: the values are paired by :mod:`.arguments` and compared value by
value (:class:`ValueComparison`). A fused or split pair compares the concatenation of the several
calls' outputs with the single call's output and, when they differ, says whether the parts are
merely in another order.

What counts as a difference: a value that differs beyond the tolerance, a shape or dtype that
differs, an output tensor on one side only, a literal (an int, a string, a bool, None) that
differs, an exception raised on one side only, an input changed in place by one side only (a
difference made in that call, even when its outputs agree: the later calls see it). What is a note: an input passed by one side only,
a value that cannot be compared (a form a summary trace cannot convert, an object's repr), a pair
guessed by order whose values differ.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

import torch

from model_debugging.compare.align import CallPair, TraceAlignment
from model_debugging.compare.arguments import Paired, PairedBy, literal, pair_inputs, pair_outputs
from model_debugging.compare.call_result import AlignmentKind, ModuleComparison, ValueComparison, ValueStatus
from model_debugging.compare.call_tree import tensor_records
from model_debugging.compare.forms import Form
from model_debugging.compare.fused import concatenated_statistics
from model_debugging.compare.numeric import GroupDiff, PairComparer
from model_debugging.compare.padding import AT_PADDED_TOKENS
from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor


def compare_pair(
    index: int, alignment: TraceAlignment, pair: CallPair, comparer: PairComparer
) -> ModuleComparison:
    """The row of ``pair``, the ``index``-th of the comparison."""
    reference = alignment.reference.node(pair.reference[0])
    candidate = alignment.candidate.node(pair.candidate[0])
    values: list[ValueComparison] = []
    details: list[str] = []
    outputs: GroupDiff | None = None
    fused_notes: list[str] = []
    if pair.kind in (AlignmentKind.FUSED, AlignmentKind.SPLIT):
        outputs = GroupDiff()
        details += _compare_fused(alignment, pair, comparer, outputs, fused_notes)
    elif reference.outputs is not None and candidate.outputs is not None:
        values = _compare_all(pair_outputs(reference.outputs, candidate.outputs), "outputs", comparer)
        outputs = _total(values)
    elif reference.outputs is not None or candidate.outputs is not None:
        side, other = ("reference", candidate) if reference.outputs is not None else ("candidate", reference)
        if not other.exception:  # else the exception, named below, is why
            details.append(f"outputs recorded only in the {side} (a call with children records none)")
    # the same elements in another layout (a Conv2d against a Linear): so are inputs of other shapes
    layout = any(value.form == str(Form.LAYOUT) for value in values)
    paired = pair_inputs(reference.inputs, candidate.inputs, comparer.agree)
    inputs_compared = [_compare_value(one, "inputs", comparer, layout) for one in paired]
    values = inputs_compared + values
    outputs = _exceptions(reference, candidate, outputs, details)
    if pair.kind not in (AlignmentKind.FUSED, AlignmentKind.SPLIT):
        outputs = _changed_in_place(reference, candidate, paired, inputs_compared, outputs, details)
    inputs = _total([value for value in values if value.place == "inputs"])
    details += [_detail(value) for value in values if value.counted and value.status is not ValueStatus.EQUAL]
    notes = [_note(value) for value in values if not value.counted and value.status is not ValueStatus.EQUAL]
    notes += fused_notes
    measured = outputs if outputs is not None and outputs.count else inputs
    return ModuleComparison(
        index=index,
        module_path=reference.module_path,
        candidate_path=candidate.module_path,
        call_index=reference.call_index,
        depth=reference.depth,
        is_leaf=pair.kind in (AlignmentKind.FUSED, AlignmentKind.SPLIT)
        or (reference.is_leaf and candidate.is_leaf),
        inputs_match=inputs.match,
        outputs_match=None if outputs is None else outputs.match,
        compared="outputs" if measured is outputs else "inputs",
        max_abs_diff=measured.max_abs,
        max_rel_diff=measured.max_rel,
        mean_abs_diff=measured.mean_abs,
        details=tuple(details),
        alignment=pair.kind,
        values=tuple(values),
        notes=tuple(notes),
    )


def in_another_form(value: ValueComparison) -> bool:
    """A counted difference that is no difference of values: tensors of shapes no form of
    :mod:`.forms` reconciles, or a tensor against a literal (a mask against None)."""
    return (
        value.status is ValueStatus.DIFFERS
        and value.max_abs_diff is None
        and value.note is not None
        and value.note.startswith(("shape ", "a tensor "))
    )


def inputs_set_aside(row: ModuleComparison, why: str) -> ModuleComparison:
    """``row`` with its differing inputs kept as notes, not counted (``why`` says why)."""
    differing = {id(value) for value in row.differing_inputs}
    values = tuple(
        replace(value, counted=False, note=f"{value.note}; {why}") if id(value) in differing else value
        for value in row.values
    )
    dropped = {_detail(value) for value in row.differing_inputs}
    inputs = _total([value for value in values if value.place == "inputs"])
    measured = row.compared == "inputs"
    return replace(
        row,
        inputs_match=inputs.match,
        details=tuple(detail for detail in row.details if detail not in dropped),
        notes=(
            *row.notes,
            *(_note(new) for old, new in zip(row.values, values, strict=True) if id(old) in differing),
        ),
        values=values,
        max_abs_diff=inputs.max_abs if measured else row.max_abs_diff,
        max_rel_diff=inputs.max_rel if measured else row.max_rel_diff,
        mean_abs_diff=inputs.mean_abs if measured else row.mean_abs_diff,
    )


def _compare_all(pairs: list[Paired], place: str, comparer: PairComparer) -> list[ValueComparison]:
    return [_compare_value(pair, place, comparer) for pair in pairs]


def _compare_value(pair: Paired, place: str, comparer: PairComparer, layout: bool = False) -> ValueComparison:
    left, right = pair.reference, pair.candidate
    where = {"place": place, "reference": _at(left), "candidate": _at(right), "paired_by": str(pair.by)}
    if left is None or right is None:
        one = left if right is None else right
        status = ValueStatus.ONLY_REFERENCE if right is None else ValueStatus.ONLY_CANDIDATE
        counted = (
            pair.counted and place == "outputs" and one.is_tensor
        )  # an output tensor missing on one side
        return ValueComparison(**where, status=status, counted=counted, note=_describe(one))
    if left.is_tensor != right.is_tensor:
        tensor, other = (left, right) if left.is_tensor else (right, left)
        counted = place == "outputs" or other.text not in (None, "None")
        text = f"a tensor {list(tensor.shape)} in the {'reference' if left.is_tensor else 'candidate'}, {other.text}"
        return ValueComparison(
            **where, status=ValueStatus.DIFFERS, counted=counted, note=text + " in the other"
        )
    if not left.is_tensor:
        return _compare_literals(where, left.text, right.text)
    if pair.form is None and layout:
        note = (
            f"set aside: shape {list(left.shape)} vs {list(right.shape)}, in another layout like the outputs"
        )
        return ValueComparison(**where, status=ValueStatus.NOT_COMPARED, counted=False, note=note)
    if pair.form is None:
        return ValueComparison(
            **where, status=ValueStatus.DIFFERS, note=f"shape {list(left.shape)} vs {list(right.shape)}"
        )
    diff = comparer.compare_values(left, right, pair.form)
    form = None if pair.form is Form.SAME else str(pair.form)
    if diff is None:
        note = f"set aside: a summary trace cannot compare values in {pair.form} form"
        return ValueComparison(**where, status=ValueStatus.NOT_COMPARED, form=form, counted=False, note=note)
    note = None
    if pair.form is Form.SAME and left.dtype != right.dtype:
        diff.match, note = False, f"dtype {left.dtype} vs {right.dtype}"
    if pair.form is Form.BROADCAST and not diff.match:
        part = comparer.agreeing_slice(left, right)
        if part is not None:
            note = f"shape {list(left.shape)} vs {list(right.shape)}: {part}"
    guessed = pair.by is PairedBy.ORDER and place == "inputs"
    if guessed and not diff.match:
        note = "paired by order only (no name, shape or value tells them apart): not counted"
    padding_only = (
        not diff.match and not guessed and comparer.differs_only_at_padded_tokens(left, right, pair.form)
    )
    if padding_only:
        note = AT_PADDED_TOKENS
    return ValueComparison(
        **where,
        status=ValueStatus.EQUAL if diff.match else ValueStatus.DIFFERS,
        form=form,
        counted=not (guessed or padding_only),
        max_abs_diff=diff.max_abs,
        max_rel_diff=diff.max_rel,
        mean_abs_diff=diff.mean_abs,
        elements=diff.count,
        note=note,
    )


def _compare_literals(where: dict, reference: str | None, candidate: str | None) -> ValueComparison:
    if reference == candidate:
        return ValueComparison(**where, status=ValueStatus.EQUAL)
    (left_ok, left), (right_ok, right) = literal(reference), literal(candidate)
    if left_ok and right_ok:
        status = ValueStatus.EQUAL if left == right else ValueStatus.DIFFERS
        return ValueComparison(**where, status=status, note=f"{reference} vs {candidate}")
    note = f"not compared: {reference if not left_ok else candidate} is not a literal"
    return ValueComparison(**where, status=ValueStatus.NOT_COMPARED, counted=False, note=note)


def _at(record: TensorRecord | None) -> str | None:
    return None if record is None else record.sub_path


def _describe(record: TensorRecord) -> str:
    return f"a tensor {list(record.shape)}" if record.is_tensor else f"{record.text}"


def _total(values: Sequence[ValueComparison]) -> GroupDiff:
    total = GroupDiff()
    for value in values:
        if not value.counted:
            continue
        if value.max_abs_diff is not None:
            abs_sum = (value.mean_abs_diff or 0.0) * value.elements
            total.add(
                value.status is ValueStatus.EQUAL,
                value.max_abs_diff,
                value.max_rel_diff or 0.0,
                abs_sum,
                value.elements,
            )
        elif value.status is not ValueStatus.EQUAL:
            total.match = False
    return total


def _detail(value: ValueComparison) -> str:
    if value.status in (ValueStatus.ONLY_REFERENCE, ValueStatus.ONLY_CANDIDATE):
        return f"{value.label} only in the {'reference' if value.reference else 'candidate'}: {value.note}"
    if value.note:
        return f"{value.label} {value.note}"
    return f"{value.label} {'differ' if value.label in ('inputs', 'outputs') else 'differs'}"


def _note(value: ValueComparison) -> str:
    if value.status in (ValueStatus.ONLY_REFERENCE, ValueStatus.ONLY_CANDIDATE):
        side = "reference" if value.reference is not None else "candidate"
        verb = "returned" if value.place == "outputs" else "passed"
        return f"{value.label} {verb} by the {side} only ({value.note})"
    return f"{value.label}: {value.note}"


def _exceptions(
    reference: TraceNode, candidate: TraceNode, outputs: GroupDiff | None, details: list[str]
) -> GroupDiff | None:
    if not (reference.exception or candidate.exception):
        return outputs
    # One detail, naming the side that raised, first: the origin line shows only the first detail.
    if reference.exception == candidate.exception:
        raised = f"both raised {reference.exception}"
    elif not reference.exception:
        raised = f"candidate raised {candidate.exception} (the reference did not raise)"
    elif not candidate.exception:
        raised = f"reference raised {reference.exception} (the candidate did not raise)"
    else:
        raised = f"reference raised {reference.exception}; candidate raised {candidate.exception}"
    details.insert(0, raised)
    if reference.exception != candidate.exception:
        outputs = outputs or GroupDiff()
        outputs.match = False
    return outputs


def _changed_in_place(
    reference: TraceNode,
    candidate: TraceNode,
    paired: list[Paired],
    compared: list[ValueComparison],
    outputs: GroupDiff | None,
    details: list[str],
) -> GroupDiff | None:
    """Name each input one side changed in place and the other did not; the call then differs.
    Nothing is said when a side's trace did not check (no extra file, or an older one)."""
    if reference.inputs_modified is None or candidate.inputs_modified is None:
        return outputs
    for one, value in zip(paired, compared, strict=True):
        by_reference = one.reference is not None and one.reference.sub_path in reference.inputs_modified
        by_candidate = one.candidate is not None and one.candidate.sub_path in candidate.inputs_modified
        if by_reference != by_candidate:
            details.append(
                f"{value.label} changed in place by the {'reference' if by_reference else 'candidate'} only"
            )
            outputs = outputs or GroupDiff()
            outputs.match = False
    return outputs


def _compare_fused(
    alignment: TraceAlignment, pair: CallPair, comparer: PairComparer, outputs: GroupDiff, notes: list[str]
) -> list[str]:
    """Compare the concatenated outputs of a fused or split pair; name its parts and, when they
    differ, whether another order of the parts would agree. Outputs that differ only at padded
    tokens are a note (appended to ``notes``), as a single call's are."""
    parts = [tensor_records(alignment.reference.node(i).outputs)[0] for i in pair.reference]
    wholes = [tensor_records(alignment.candidate.node(i).outputs)[0] for i in pair.candidate]
    if _compare_concatenated(parts, wholes, comparer, outputs):
        outputs.match = True
        notes.append(f"outputs: {AT_PADDED_TOKENS}")
    names = [
        [tree.node(i).module_path for i in calls]
        for tree, calls in ((alignment.reference, pair.reference), (alignment.candidate, pair.candidate))
    ]
    details = [f"{pair.kind.value}: {' + '.join(names[0])} = {' + '.join(names[1])}"]
    if not outputs.match and comparer.mode == "tensors":
        order = _agreeing_order(parts, wholes, comparer)
        if order is not None:
            several, single = (names[0], names[1][0]) if len(parts) > 1 else (names[1], names[0][0])
            details.append(
                f"the parts are in another order: {single} = {' + '.join(several[i] for i in order)}"
            )
    return details


def _compare_concatenated(
    references: list[TensorRecord], candidates: list[TensorRecord], comparer: PairComparer, diff: GroupDiff
) -> bool:
    """The outputs of one side concatenated on the last dimension against the other side's; whether
    they differ only at padded tokens (see :mod:`.padding`)."""
    if comparer.mode == "stats":
        expected = references[0] if len(references) == 1 else concatenated_statistics(references)
        actual = candidates[0] if len(candidates) == 1 else concatenated_statistics(candidates)
        comparer.compare(expected, actual, diff)
        return False
    expected, actual = (
        torch.cat([read_recorded_tensor(record) for record in records], dim=-1)
        for records in (references, candidates)
    )
    tolerance = comparer.noise_tolerance(*references)
    compared = comparer.compare_tensors(expected, actual, tolerance)
    diff.add(*compared)
    return not compared[0] and comparer.tensors_differ_only_at_padded_tokens(expected, actual, tolerance)


def _agreeing_order(
    references: list[TensorRecord], candidates: list[TensorRecord], comparer: PairComparer
) -> tuple[int, ...] | None:
    """The order of the several parts whose concatenation agrees with the single call's output."""
    several, single = (references, candidates[0]) if len(references) > 1 else (candidates, references[0])
    whole = read_recorded_tensor(single)
    tensors = [read_recorded_tensor(record) for record in several]
    for order in itertools.permutations(range(len(tensors))):
        if order == tuple(range(len(tensors))):
            continue
        arranged = torch.cat([tensors[i] for i in order], dim=-1)
        if arranged.shape == whole.shape and comparer.compare_tensors(whole, arranged)[0]:
            return order
    return None
