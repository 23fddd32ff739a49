"""The statistics recorded for one tensor: upstream's repr strings and our ``statistics`` numbers.

:func:`tensor_statistics` is the one place they are computed. It runs on every record, nothing is
cached: a change made in place through ``tensor.data`` does not bump the version counter, so no
cache key torch offers could tell the values changed.

- ``mean``/``std``/``min``/``max``: for float16/bfloat16/float32 tensors, the reprs of the
  statistics computed in the tensor's dtype, exactly as upstream writes them.
- ``statistics`` (for every numeric dtype; written to the extra file, see :mod:`.trace_format.extra`): JSON numbers.
  Floating tensors: mean/std/min/max in float64 over the finite elements, and the counts of NaN,
  +inf and -inf. Integers and bools: exact min, max, sum, and the sum of each value times its
  1-based position (``weighted_sum``, which tells permutations apart; int64 arithmetic, wrapping on
  overflow). Complex tensors: the floating statistics of each part.

Speed: a finite float32/float64 tensor takes the fused path (see :mod:`.fused_statistics`: on CPU
one pass after torch's ``aminmax`` and ``mean``, and one host copy) instead of a float64 copy and
eight reductions; anything else takes the general path below.
"""

from __future__ import annotations

import functools
import math
import warnings

import torch

from model_debugging.debugger.fused_statistics import finite_or_none, fused_statistics
from model_debugging.debugger.single_thread import with_callers_threads
from model_debugging.debugger.tensor_repr import PrintOptions, scalar_reprs, value_reprs
from model_debugging.debugger.trace_format.names import STAT_NAMES

UPSTREAM_STATS_DTYPES = frozenset({torch.float16, torch.bfloat16, torch.float32})
# wider than int64 or unsigned: summed and compared after a (wrapping, deterministic) cast to int64
_INTEGER_DTYPES = frozenset(
    {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}
    | {torch.uint16, torch.uint32, torch.uint64}
)


def tensor_statistics(tensor: torch.Tensor, options: PrintOptions) -> tuple[dict[str, str], dict | None]:
    """Upstream's stats reprs of ``tensor`` (keys of its trace entry) and its ``statistics`` numbers.

    Either may be empty (None): empty and sparse tensors get neither.
    """
    if tensor.numel() == 0 or tensor.layout != torch.strided:
        return {}, None
    data = tensor.detach()
    fused = fused_statistics(data)
    if fused is not None:
        upstream, statistics = fused
        reprs = (
            {}
            if upstream is None
            else dict(zip(STAT_NAMES, value_reprs(list(upstream), data, options), strict=True))
        )
        return reprs, statistics
    # on the meta device upstream's stats are reprs without values: kept, for the same text
    reprs = _upstream_stats(data, options) if data.dtype in UPSTREAM_STATS_DTYPES else {}
    return reprs, None if data.device.type == "meta" else _numeric_statistics(data)


def _upstream_stats(data: torch.Tensor, options: PrintOptions) -> dict[str, str]:
    # torch's own order of additions, as upstream gets it: on the traced code's thread count
    return with_callers_threads(functools.partial(_upstream_reprs, options=options), data)


def _upstream_reprs(data: torch.Tensor, options: PrintOptions) -> dict[str, str]:
    if data.numel() > 1:
        std = data.std()
    else:  # nan, as upstream records it, without torch's degrees-of-freedom warning
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            std = data.std()
    low, high = torch.aminmax(data)
    reprs = scalar_reprs([data.mean(), std, low, high], options)
    return dict(zip(STAT_NAMES, reprs, strict=True))


def _numeric_statistics(data: torch.Tensor) -> dict | None:
    if data.is_complex():
        parts = torch.view_as_real(data.resolve_conj().to(torch.complex128))
        return {"real": _floating_statistics(parts[..., 0]), "imag": _floating_statistics(parts[..., 1])}
    if data.is_floating_point():
        return _floating_statistics(data.to(torch.float64))
    if data.dtype in _INTEGER_DTYPES:
        values = data.to(torch.int64).reshape(-1)
        low, high = torch.aminmax(values)
        # the weighted sum tells permutations apart, which min, max and sum cannot
        positions = torch.arange(1, values.numel() + 1, device=values.device)
        weighted = int(values.mul(positions).sum())
        return {"min": int(low), "max": int(high), "sum": int(values.sum()), "weighted_sum": weighted}
    return None  # quantized, bits, and other dtypes without arithmetic


def _floating_statistics(values: torch.Tensor) -> dict[str, float | int | None]:
    low, high = (float(bound) for bound in torch.aminmax(values))
    nan = posinf = neginf = 0
    if not (math.isfinite(low) and math.isfinite(high)):  # aminmax propagates NaN: finite bounds mean none
        nan = int(values.isnan().sum())
        posinf = int((values == math.inf).sum())
        neginf = int((values == -math.inf).sum())
        values = values[torch.isfinite(values)]
        if values.numel():
            low, high = (float(bound) for bound in torch.aminmax(values))
    counts = {"nan": nan, "posinf": posinf, "neginf": neginf}
    if values.numel() == 0:
        return dict.fromkeys(("mean", "std", "min", "max")) | counts
    return {
        "mean": finite_or_none(float(values.mean())),
        "std": finite_or_none(float(values.std())) if values.numel() > 1 else None,
        "min": low,
        "max": high,
        **counts,
    }
