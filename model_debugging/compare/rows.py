"""One row of the comparison per pair of calls: how their inputs and outputs differ.

Within a pair matched by path, tensors pair by where they sit (``args.0``, ``kwargs.mask``, ``0``);
within an inferred pair the two implementations may pass them differently (positionally on one
side, by keyword on the other), so they pair by position among the tensors. A fused or split pair
compares the concatenation of the several calls' outputs with the single call's output.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from model_debugging.compare.align import CallPair, TraceAlignment
from model_debugging.compare.call_tree import tensor_records
from model_debugging.compare.fused import concatenated_statistics
from model_debugging.compare.numeric import GroupDiff, PairComparer
from model_debugging.compare.result import AlignmentKind, ModuleComparison
from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor


def compare_pair(
    index: int, alignment: TraceAlignment, pair: CallPair, comparer: PairComparer
) -> ModuleComparison:
    """The row of ``pair``, the ``index``-th of the comparison."""
    reference = alignment.reference.node(pair.reference[0])
    candidate = alignment.candidate.node(pair.candidate[0])
    if pair.kind is AlignmentKind.PATH:
        return compare_calls(index, reference, candidate, comparer)
    candidate = _keyed_like(candidate, reference)
    if pair.kind is AlignmentKind.INFERRED:
        return replace(compare_calls(index, reference, candidate, comparer), alignment=pair.kind)
    details: list[str] = []
    inputs = compare_records(reference.inputs, candidate.inputs, "inputs", comparer, details)
    parts = [tensor_records(alignment.reference.node(i).outputs)[0] for i in pair.reference]
    wholes = [tensor_records(alignment.candidate.node(i).outputs)[0] for i in pair.candidate]
    outputs = GroupDiff()
    _compare_concatenated(parts, wholes, comparer, outputs)
    names = [
        " + ".join(tree.node(i).module_path for i in calls)
        for tree, calls in ((alignment.reference, pair.reference), (alignment.candidate, pair.candidate))
    ]
    details.append(f"{pair.kind.value}: {names[0]} = {names[1]}")
    return ModuleComparison(
        index=index,
        module_path=reference.module_path,
        candidate_path=candidate.module_path,
        call_index=reference.call_index,
        depth=reference.depth,
        is_leaf=True,
        inputs_match=inputs.match,
        outputs_match=outputs.match,
        compared="outputs",
        max_abs_diff=outputs.max_abs,
        max_rel_diff=outputs.max_rel,
        mean_abs_diff=outputs.mean_abs,
        details=tuple(details),
        alignment=pair.kind,
    )


def _compare_concatenated(
    references: list[TensorRecord], candidates: list[TensorRecord], comparer: PairComparer, diff: GroupDiff
) -> None:
    """The outputs of one side concatenated on the last dimension against the other side's."""
    if comparer.mode == "stats":
        expected = references[0] if len(references) == 1 else concatenated_statistics(references)
        actual = candidates[0] if len(candidates) == 1 else concatenated_statistics(candidates)
        comparer.compare(expected, actual, diff)
        return
    expected, actual = (
        torch.cat([read_recorded_tensor(record) for record in records], dim=-1)
        for records in (references, candidates)
    )
    diff.add(*comparer.compare_tensors(expected, actual))


def _keyed_like(candidate: TraceNode, reference: TraceNode) -> TraceNode:
    """``candidate`` with its tensors renamed positionally after ``reference``'s, when they differ."""

    def rekeyed(theirs: tuple[TensorRecord, ...] | None, ours: tuple[TensorRecord, ...] | None):
        if theirs is None or ours is None:
            return theirs
        wanted = [record.sub_path for record in tensor_records(ours)]
        given = tensor_records(theirs)
        if [record.sub_path for record in given] == wanted:
            return theirs
        names = iter(wanted)
        return tuple(replace(record, sub_path=next(names, record.sub_path)) for record in given)

    return replace(
        candidate,
        inputs=rekeyed(candidate.inputs, reference.inputs),
        outputs=rekeyed(candidate.outputs, reference.outputs),
    )


def compare_records(
    reference: tuple[TensorRecord, ...],
    candidate: tuple[TensorRecord, ...],
    label: str,
    comparer: PairComparer,
    details: list[str],
) -> GroupDiff:
    diff = GroupDiff()
    candidate_tensors = {record.sub_path: record for record in candidate if record.is_tensor}
    for expected in reference:
        if not expected.is_tensor:
            continue
        name = f"{label}.{expected.sub_path}" if expected.sub_path else label
        actual = candidate_tensors.pop(expected.sub_path, None)
        if actual is None:
            details.append(f"{name} only in reference")
            continue
        if expected.shape != actual.shape:
            details.append(f"{name} shape {list(expected.shape)} vs {list(actual.shape)}")
            diff.match = False
            continue
        if expected.dtype != actual.dtype:
            details.append(f"{name} dtype {expected.dtype} vs {actual.dtype}")
            diff.match = False
        comparer.compare(expected, actual, diff)
    for sub_path in candidate_tensors:
        details.append(f"{label}.{sub_path} only in candidate" if sub_path else f"{label} only in candidate")
    return diff


def compare_calls(
    index: int, reference: TraceNode, candidate: TraceNode, comparer: PairComparer
) -> ModuleComparison:
    details: list[str] = []
    inputs = compare_records(reference.inputs, candidate.inputs, "inputs", comparer, details)
    outputs = None
    if reference.outputs is not None and candidate.outputs is not None:
        outputs = compare_records(reference.outputs, candidate.outputs, "outputs", comparer, details)
    elif reference.outputs is not None or candidate.outputs is not None:
        details.append(
            f"outputs recorded only in {'reference' if reference.outputs is not None else 'candidate'}"
        )
    if reference.exception or candidate.exception:
        details.append(
            f"reference raised {reference.exception}" if reference.exception else "reference did not raise"
        )
        details.append(
            f"candidate raised {candidate.exception}" if candidate.exception else "candidate did not raise"
        )
        if reference.exception != candidate.exception:
            outputs = outputs or GroupDiff()
            outputs.match = False
    measured = outputs if outputs is not None and outputs.count else inputs
    return ModuleComparison(
        index=index,
        module_path=reference.module_path,
        candidate_path=candidate.module_path,
        call_index=reference.call_index,
        depth=reference.depth,
        is_leaf=reference.is_leaf and candidate.is_leaf,
        inputs_match=inputs.match,
        outputs_match=None if outputs is None else outputs.match,
        compared="outputs" if measured is outputs else "inputs",
        max_abs_diff=measured.max_abs,
        max_rel_diff=measured.max_rel,
        mean_abs_diff=measured.mean_abs,
        details=tuple(details),
    )
