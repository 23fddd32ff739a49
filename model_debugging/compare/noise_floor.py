"""The reference's own rounding in half precision, per call: how far its float16/bfloat16 values are
from the same reference run in float32.

A fixed tolerance cannot tell bfloat16 rounding grown through the layers from a small bug: the
rounding of a correct twelve-layer port grows to about 1.5% of the largest value while an
``o_proj`` scaled by 0.97 differs by 3%. The reference run a second time in float32 (a copy upcast,
the same weights) shows how much rounding each recorded tensor carries at its depth: ``level`` is
the largest difference between the two runs' values of that tensor. A correct port rounds about as
much as the reference, so its difference from the reference stays within a few levels (3 pass
every tensor of the Llama ports of the tests, 2 to 12 layers, in bfloat16); an ``o_proj`` scaled by
0.97 is still named at ``self_attn`` with 6 (measurements: docs/design/half_precision_noise.md).
Such a tensor is compared within ``atol + MULTIPLE * level`` and ``rtol`` (compare's float32
defaults unless given) instead of the tolerance derived from the dtype.

Example::

    floor = NoiseFloor.measure(read_trace("debug_port/reference"), read_trace("reference_float32/"))
    floor.level(record)  # None for a tensor the float32 run did not record
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from model_debugging.debugger.trace_format.records import TensorRecord, Trace, TraceError
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor

# between the 3 a correct port needs and the 6 up to which a 3% bug is still named (see above)
MULTIPLE = 4.0
HALF_PRECISION = ("torch.float16", "torch.bfloat16")  # the dtypes, as traces name them


@dataclass(frozen=True)
class NoiseFloor:
    """The largest difference between a half-precision reference trace's tensors and the same
    tensors of a float32 run of the reference, per tensor file of the first."""

    source: Path
    levels: dict[Path, float]

    @classmethod
    def measure(cls, reference: Trace, float32: Trace) -> NoiseFloor:
        """Raises ``TraceError`` when the two traces share no half-precision tensor with files (the
        second is no float32 run of the reference, or a trace without tensor files)."""
        levels = {
            record.file: largest_difference(read_recorded_tensor(record), read_recorded_tensor(twin))
            for record, twin in _twins(reference, float32)
        }
        if not levels:
            raise TraceError(
                float32.path,
                f"shares no float16/bfloat16 tensor (same call, place and shape, stored in a file) with "
                f"{reference.path}: it is no float32 run of that reference",
            )
        return cls(float32.path, levels)

    def level(self, record: TensorRecord) -> float | None:
        """The reference's own rounding in ``record`` (a tensor of the half-precision trace)."""
        return None if record.file is None else self.levels.get(record.file)


def _twins(reference: Trace, float32: Trace) -> Iterator[tuple[TensorRecord, TensorRecord]]:
    """(half-precision record, float32 record) of the same call, place and shape, both in files."""
    nodes = {(node.module_path, node.call_index): node for node in float32.nodes}
    for node in reference.nodes:
        twin = nodes.get((node.module_path, node.call_index))
        if twin is None:
            continue
        for ours, theirs in ((node.inputs, twin.inputs), (node.outputs or (), twin.outputs or ())):
            others = {record.sub_path: record for record in theirs}
            for record in ours:
                other = others.get(record.sub_path)
                if (
                    record.dtype in HALF_PRECISION
                    and record.file is not None
                    and other is not None
                    and other.file is not None
                    and other.shape == record.shape
                    and other.dtype is not None
                ):
                    yield record, other


def allowance(level: float, atol: float, rtol: float) -> tuple[float, float]:
    """(atol, rtol) of a tensor carrying ``level`` of the reference's own rounding, given compare's
    float32 ``atol`` and ``rtol``."""
    return atol + MULTIPLE * level, rtol


def largest_difference(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    """The largest difference where both are finite (a non-finite value is compared as compare does)."""
    if not theirs.dtype.is_floating_point:
        return 0.0
    ours, theirs = ours.double(), theirs.double()
    finite = ours.isfinite() & theirs.isfinite()
    return float((ours[finite] - theirs[finite]).abs().max()) if finite.any() else 0.0
