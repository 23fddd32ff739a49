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
eight reductions; anything else takes the general path below. For a contiguous one on CPU the
numbers can be computed off the traced code's thread (:func:`threads_off_thread`, see
:mod:`.background`) and turned into the entry's text on it afterwards (:func:`statistics_from`).
"""

from __future__ import annotations

import functools
import math
import warnings

import torch

from model_debugging.debugger.fused_statistics import (
    ChunkPass,
    FusedResult,
    finite_double_statistics,
    finite_or_none,
    fused_statistics,
    takes_fused_path,
)
from model_debugging.debugger.single_thread import (
    mean_without_switching,
    reducing_threads,
    with_callers_threads,
)
from model_debugging.debugger.tensor_repr import PrintOptions, scalar_reprs, value_reprs
from model_debugging.debugger.trace_format.names import STAT_NAMES

UPSTREAM_STATS_DTYPES = frozenset({torch.float16, torch.bfloat16, torch.float32})
# wider than int64 or unsigned: summed and compared after a (wrapping, deterministic) cast to int64
_INTEGER_DTYPES = frozenset(
    {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}
    | {torch.uint16, torch.uint32, torch.uint64}
)


Statistics = tuple[dict[str, str], dict | None]


def tensor_statistics(tensor: torch.Tensor, options: PrintOptions) -> Statistics:
    """Upstream's stats reprs of ``tensor`` (keys of its trace entry) and its ``statistics`` numbers.

    Either may be empty (None): empty and sparse tensors get neither.
    """
    if tensor.numel() == 0 or tensor.layout != torch.strided:
        return {}, None
    data = tensor.detach()
    return statistics_from(fused_statistics(data), data, options)


# the floating dtypes torch reduces on CPU (float8 kinds it does not): their statistics may be
# computed off the traced code's thread, and in one pass without a float64 copy
_CPU_REDUCED_FLOAT_DTYPES = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})


def threads_off_thread(tensor: torch.Tensor) -> int | None:
    """The thread count to give :func:`numbers_off_thread` for ``tensor``, or None when its
    statistics must be computed on the traced code's thread (:func:`tensor_statistics`).

    A plain contiguous floating CPU tensor qualifies when the traced code reduces it on one thread
    (every torch op then adds in the same order on any thread), and a float32/float64 one on any
    count (its upstream ``mean`` is computed in that count's order; nothing else depends on it).
    """
    if (
        type(tensor) is not torch.Tensor
        or tensor.dtype not in _CPU_REDUCED_FLOAT_DTYPES
        or not tensor.is_cpu
        or tensor.layout != torch.strided
        or tensor.numel() == 0
        or not tensor.is_contiguous()
        or tensor.is_neg()
        or tensor._is_zerotensor()
    ):
        return None
    threads = reducing_threads(tensor)
    if threads <= 1:
        return 1
    return threads if takes_fused_path(tensor) and mean_without_switching(tensor, threads) else None


def numbers_off_thread(
    data: torch.Tensor, threads: int, first_pass: ChunkPass | None = None
) -> FusedResult | None:
    """The numbers :func:`statistics_from` makes ``data``'s statistics of, computed on this thread
    (one intra-op thread); None where they must be computed on the traced code's thread.
    ``first_pass``: see :func:`.fused_statistics.fused_statistics`."""
    fused = fused_statistics(data, threads, first_pass)
    if fused is not None or threads > 1:
        return fused
    # float16/bfloat16, or NaN and infinities: the general path, in the traced code's order
    upstream = _upstream_numbers(data) if data.dtype in UPSTREAM_STATS_DTYPES else None
    return upstream, _numeric_statistics(data)


def statistics_from(numbers: FusedResult | None, data: torch.Tensor, options: PrintOptions) -> Statistics:
    """The statistics of ``data`` from the numbers :func:`fused_statistics` or :func:`numbers_off_thread`
    gave for it, on the traced code's thread (torch's default dtype and device decide the reprs'
    suffixes); the general path when they gave None."""
    if numbers is not None:
        upstream, statistics = numbers
        if upstream is None:
            return {}, statistics
        return dict(zip(STAT_NAMES, value_reprs(list(upstream), data, options), strict=True)), statistics
    # on the meta device upstream's stats are reprs without values: kept, for the same text
    reprs = _upstream_stats(data, options) if data.dtype in UPSTREAM_STATS_DTYPES else {}
    return reprs, None if data.device.type == "meta" else _numeric_statistics(data)


def _upstream_stats(data: torch.Tensor, options: PrintOptions) -> dict[str, str]:
    # torch's own order of additions, as upstream gets it: on the traced code's thread count
    return with_callers_threads(functools.partial(_upstream_reprs, options=options), data)


def _upstream_numbers(data: torch.Tensor) -> tuple[float, float, float, float]:
    """Upstream's mean, std, min and max of ``data``, as the numbers its 0-dim results hold."""
    if data.numel() > 1:
        std = data.std()
    else:  # nan, as upstream records it, without torch's degrees-of-freedom warning
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            std = data.std()
    low, high = torch.aminmax(data)
    mean, std, low, high = torch.stack([data.mean(), std, low, high]).tolist()
    return mean, std, low, high


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
        # float16/bfloat16 on CPU: no float64 copy (8 bytes per element, the logits' peak grew by it)
        # (float8 kinds take the float64 copy, from a byte per element anyway)
        in_place = data.is_cpu and data.dtype in _CPU_REDUCED_FLOAT_DTYPES
        finite = finite_double_statistics(data) if in_place else None
        return finite if finite is not None else _floating_statistics(data.to(torch.float64))
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
