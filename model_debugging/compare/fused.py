"""Fused and split projections: one call whose output is the concatenation of several others'.

A port often computes ``q_proj``, ``k_proj`` and ``v_proj`` with one ``qkv_proj`` (or the reverse):
the single call's output is the other side's outputs concatenated along the last dimension, in
execution order. The parts must be calls that may be projections (:mod:`.kinds`: never a norm)
and must all have received the same input, as the parts of one projection do (a norm's output
concatenated with two projections' never is); the single call's input must have their shape. The
values of the outputs are then compared like any other pair, so a fused weight whose halves were
swapped shows up as that pair differing (and the row says which order of the parts agrees).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from model_debugging.compare.call_tree import CallTree, tensor_records
from model_debugging.debugger.trace_format.records import TensorRecord

# A tensor's place in a signature: (shape, dtype); None when the call recorded no tensor there.
TensorSignature = tuple[tuple[int, ...], str] | None


def signature(record: TensorRecord | None) -> TensorSignature:
    return None if record is None or record.shape is None else (record.shape, record.dtype or "")


def first_tensor(records: tuple[TensorRecord, ...] | None) -> TensorRecord | None:
    tensors = tensor_records(records)
    return tensors[0] if tensors else None


def single_output(tree: CallTree, index: int) -> TensorRecord | None:
    """The output of a leaf call that returned exactly one tensor (what a projection returns)."""
    outputs = tensor_records(tree.node(index).outputs)
    return outputs[0] if len(outputs) == 1 and outputs[0].shape else None


def find_fusable_run(
    whole: TensorSignature,
    whole_input: TensorSignature,
    tree: CallTree,
    pool: Sequence[int],
    same_input: Callable[[int, int], bool],
) -> tuple[int, ...] | None:
    """The first run of two or more calls of ``pool`` (consecutive among those taking an input shaped
    like ``whole_input``, all given the same input by ``same_input``) whose single outputs,
    concatenated on the last dimension, are shaped like ``whole``."""
    if whole is None or not whole[0]:
        return None
    shape, dtype = whole
    parts = []  # (call, width of its output's last dimension) for the calls that could be a part
    for index in pool:
        output = signature(single_output(tree, index))
        if (
            output is not None
            and output[1] == dtype
            and len(output[0]) == len(shape)
            and output[0][:-1] == shape[:-1]
            and signature(first_tensor(tree.node(index).inputs)) == whole_input
        ):
            parts.append((index, output[0][-1]))
    for start in range(len(parts)):
        total = 0
        for end, (_, width) in enumerate(parts[start:], start + 1):
            total += width
            if total == shape[-1] and end - start > 1:
                run = tuple(index for index, _ in parts[start:end])
                if all(same_input(run[0], index) for index in run[1:]):
                    return run
            if total > shape[-1]:
                break
    return None


def concatenated_statistics(records: Sequence[TensorRecord]) -> TensorRecord:
    """The record of the concatenation of ``records``: shape, dtype and mean/std/min/max combined
    from each part's (the std is the unbiased one, as the debugger records it)."""
    first = records[0]
    shape = (*first.shape[:-1], sum(record.shape[-1] for record in records))
    parts = [(math.prod(record.shape), dict(record.stats)) for record in records]
    total = sum(count for count, _ in parts)
    stats: dict[str, float | None] = dict.fromkeys(("mean", "std", "min", "max"))
    if total and all(
        all(stats.get(name) is not None for name in ("mean", "min", "max")) for _, stats in parts
    ):
        mean = sum(count * part["mean"] for count, part in parts) / total
        stats["mean"], stats["min"], stats["max"] = (
            mean,
            min(part["min"] for _, part in parts),
            max(part["max"] for _, part in parts),
        )
        if total > 1 and all(part.get("std") is not None or count == 1 for count, part in parts):
            squares = sum(
                (count - 1) * (part.get("std") or 0.0) ** 2 + count * part["mean"] ** 2
                for count, part in parts
            )
            stats["std"] = math.sqrt(max(squares - total * mean**2, 0.0) / (total - 1))
    ordered = tuple((name, stats[name]) for name, _ in first.stats) or tuple(stats.items())
    return TensorRecord(sub_path=first.sub_path, shape=shape, dtype=first.dtype, stats=ordered)
