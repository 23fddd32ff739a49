"""The reference's own spread: how far two runs of the reference (bf16 vs fp32, eager vs SDPA) drift apart in each call.

For every recorded call with outputs in both traces (matched by module path and call index), the
spread it *adds* is estimated: the largest output difference between the two runs, less what its
inputs already carried in (the inputs' relative difference applied to the outputs' magnitude),
and never less than half a rounding step of the output dtype at that magnitude. Subtracting what
came in keeps the yardstick of a deep module from growing with every layer before it: a replayed
difference is measured against what the call itself does differently when the reference is run
another way.

The code between two recorded calls of a module (what replay checks as the inputs of the next
recorded call) gets a level too: the spread of that call's inputs, less what the enclosing call's
inputs carried in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor


@dataclass(frozen=True)
class NoiseLevels:
    """The spread each call adds between two reference runs, per (module path, call index) of the first."""

    source: os.PathLike | str
    levels: dict[tuple[str, int], float]
    input_levels: dict[tuple[str, int], float]

    @classmethod
    def measure(cls, reference: str | os.PathLike, second_reference: str | os.PathLike) -> NoiseLevels:
        first, second = read_trace(reference), read_trace(second_reference)
        twins = {(node.module_path, node.call_index): node for node in second.nodes}
        levels, input_levels = {}, {}
        enclosing: list[TraceNode] = []
        for node in first.nodes:
            while enclosing and enclosing[-1].depth >= node.depth:
                enclosing.pop()
            key = (node.module_path, node.call_index)
            twin = twins.get(key)
            parent = enclosing[-1] if enclosing else None
            parent_twin = twins.get((parent.module_path, parent.call_index)) if parent is not None else None
            enclosing.append(node)
            if twin is None:
                continue
            if node.outputs is not None and twin.outputs is not None:
                level = _added_spread(node.inputs, twin.inputs, node.outputs, twin.outputs)
                if level is not None:
                    levels[key] = level
            if parent is not None and parent_twin is not None:
                level = _added_spread(parent.inputs, parent_twin.inputs, node.inputs, twin.inputs)
                if level is not None:
                    input_levels[key] = level
        return cls(source=second.path, levels=levels, input_levels=input_levels)

    def level(self, node: TraceNode, inputs: bool = False) -> float | None:
        """The spread ``node`` adds (the code before it, with ``inputs``); None when the second run
        has no such call with comparable tensors."""
        return (self.input_levels if inputs else self.levels).get((node.module_path, node.call_index))


def _pairs(first: tuple[TensorRecord, ...], second: tuple[TensorRecord, ...]):
    """(first, second) float64 tensors of the same sub path and shape, both stored in files."""
    others = {record.sub_path: record for record in second if record.is_tensor and record.file is not None}
    for record in first:
        other = others.get(record.sub_path)
        if record.is_tensor and record.file is not None and other is not None and other.shape == record.shape:
            yield read_recorded_tensor(record), read_recorded_tensor(other)


def _finite_max_abs(tensor: torch.Tensor) -> float:
    finite = tensor[tensor.isfinite()]
    return float(finite.abs().max()) if finite.numel() else 0.0


def _added_spread(
    given: tuple[TensorRecord, ...],
    twin_given: tuple[TensorRecord, ...],
    made: tuple[TensorRecord, ...],
    twin_made: tuple[TensorRecord, ...],
) -> float | None:
    """The largest difference of ``made`` between the runs, less what ``given`` carried in."""
    carried_in = 0.0  # the inputs' largest difference relative to their magnitude
    for ours, theirs in _pairs(given, twin_given):
        if ours.is_floating_point() and ours.numel():
            scale = _finite_max_abs(ours.double())
            if scale:
                carried_in = max(carried_in, _finite_max_abs(ours.double() - theirs.double()) / scale)
    spread, found = 0.0, False
    for ours, theirs in _pairs(made, twin_made):
        if not ours.is_floating_point() or not ours.numel():
            continue
        found = True
        scale = _finite_max_abs(ours.double())
        rounding = 0.5 * torch.finfo(ours.dtype).eps * scale
        difference = _finite_max_abs(ours.double() - theirs.double())
        spread = max(spread, difference - carried_in * scale, rounding)
    return spread if found else None
