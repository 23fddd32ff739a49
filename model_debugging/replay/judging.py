"""How far a replayed tensor is from the reference's, with tolerances that follow the dtype.

The numbers come from compare's tensor diff (:class:`~model_debugging.compare.numeric.PairComparer`).
By default float32 and float64 use compare's tolerances (``atol=1e-5``, ``rtol=1e-4``); float16 and
bfloat16 allow two units of their rounding step, relative to each element (``rtol = 2 * eps``) and to
the tensor's largest magnitude (``atol = 2 * eps * max|reference|``): a port that only rounds
differently stays within them, a wrong computation does not. The dtype that decides is the least
precise of the two tensors' and the one the candidate computes in (its parameters'): a bfloat16
port replayed on a float32 reference is judged with bfloat16's tolerances, also where it returns
float32. Differences only at the tokens the model's ``attention_mask`` pads are not counted, as in
compare (see ``compare/padding.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.padding import differs_only_at_padded_tokens

_DEFAULT_ATOL, _DEFAULT_RTOL = 1e-5, 1e-4
_LOW_PRECISION_STEPS = 2.0


@dataclass(frozen=True)
class Tolerance:
    """``None`` for ``atol`` or ``rtol`` means "chosen from the dtypes"; ``computed_in`` is the
    candidate's dtype (None when unknown); ``padded`` marks the tokens the model's attention_mask pads
    (``[batch, tokens]``, None when it pads none)."""

    atol: float | None = None
    rtol: float | None = None
    computed_in: torch.dtype | None = None
    padded: torch.Tensor | None = None

    def __post_init__(self) -> None:
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")

    def for_pair(self, reference: torch.Tensor, candidate: torch.Tensor) -> tuple[float, float]:
        atol, rtol = _DEFAULT_ATOL, _DEFAULT_RTOL
        low = [
            dtype
            for dtype in (reference.dtype, candidate.dtype, self.computed_in)
            if dtype in (torch.float16, torch.bfloat16)
        ]
        if low and reference.numel():
            eps = max(torch.finfo(dtype).eps for dtype in low)
            finite = reference[reference.isfinite()]
            scale = float(finite.abs().max()) if finite.numel() else 0.0
            atol, rtol = _LOW_PRECISION_STEPS * eps * scale, _LOW_PRECISION_STEPS * eps
        return (atol if self.atol is None else self.atol, rtol if self.rtol is None else self.rtol)


@dataclass(frozen=True)
class TensorDiff:
    within: bool
    max_abs: float
    max_rel: float


def diff_tensors(reference: torch.Tensor, candidate: torch.Tensor, tolerance: Tolerance) -> TensorDiff:
    """Compare two tensors of the same shape; a shape mismatch is the caller's to report."""
    atol, rtol = tolerance.for_pair(reference, candidate)
    reference, candidate = reference.detach().cpu(), candidate.detach().cpu()
    within, max_abs, max_rel, _, _ = PairComparer(atol, rtol, "tensors").compare_tensors(reference, candidate)
    if not within and tolerance.padded is not None:
        within = differs_only_at_padded_tokens(reference, candidate, atol, rtol, tolerance.padded)
    return TensorDiff(within=within, max_abs=max_abs, max_rel=max_rel)


def worse(first: float | None, second: float) -> float:
    """The larger of two differences, ``None`` counting as no difference yet (NaN as infinite)."""
    second = math.inf if math.isnan(second) else second
    return second if first is None else max(first, second)
