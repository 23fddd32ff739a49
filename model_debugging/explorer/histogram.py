"""A small histogram of one tensor file, computed when the page is built (the page never reads tensors)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from model_debugging.debugger.trace_format.tensor_files import read_tensor_file

# Enough bars to see a shape, few enough that a 10,000-call trace's page stays small.
HISTOGRAM_BINS = 24


@dataclass(frozen=True)
class Histogram:
    """Counts of the finite values in ``bins`` equal-width bins over [low, high], plus the non-finite ones."""

    low: float
    high: float
    counts: tuple[int, ...]
    nan: int
    posinf: int
    neginf: int

    def to_json(self) -> dict:
        return {
            "low": self.low,
            "high": self.high,
            "counts": list(self.counts),
            "nan": self.nan,
            "posinf": self.posinf,
            "neginf": self.neginf,
        }


def tensor_histogram(path: Path, bins: int = HISTOGRAM_BINS) -> Histogram | None:
    """The histogram of the tensor in ``path``; None for a tensor that holds no numbers (bool, empty)."""
    import torch  # only traces with tensor files need it

    tensor = read_tensor_file(path)
    if tensor.numel() == 0 or tensor.dtype == torch.bool or tensor.is_complex():
        return None
    values = tensor.reshape(-1).to(torch.float64)
    finite = values[values.isfinite()]
    counts: tuple[int, ...] = ()
    low = high = 0.0
    if finite.numel():
        low, high = float(finite.min()), float(finite.max())
        if low == high:
            counts = (int(finite.numel()),)
        else:
            counts = tuple(int(count) for count in torch.histc(finite, bins=bins, min=low, max=high).tolist())
    return Histogram(
        low=low,
        high=high,
        counts=counts,
        nan=int(values.isnan().sum()),
        posinf=int((values == math.inf).sum()),
        neginf=int((values == -math.inf).sum()),
    )
