"""Statistics of a finite float32/float64 tensor in few passes, with one host copy per step.

The general path (:mod:`.statistics`) copies the tensor to float64, masks non-finite values and
runs eight reductions, each read back with its own ``.item()``. For the 256 x 32000 logits of a
small Llama that is a 64 MiB temporary and most of the debugger's time. Here:

- ``aminmax`` and the tensor's own ``mean`` come first (upstream's ``mean``/``min``/``max``,
  computed by torch as upstream computes them). Finite min and max mean every element is finite,
  so the NaN/inf counts are zero and no mask is built; otherwise the caller takes the general
  path, which counts them.
- Small tensors (at most ``CHUNK`` elements) then run exactly the general path's reductions
  (``std`` in the tensor's dtype, ``mean``/``std`` of the float64 copy): the same numbers, fewer
  host copies.
- Large CPU tensors take one pass over a contiguous view, ``CHUNK`` elements at a time through a
  float64 buffer that stays in cache: the float64 sum, and the sum of squared deviations from
  the tensor's own mean. From these come the float64 mean and std, and upstream's float32 std:
  torch's CPU ``std`` of a float32 tensor is exactly this sum of squares around the float32
  mean, accumulated in double and rounded to float32, so only the summation order differs
  (about 1e-16 relative, far below float32's rounding; checked bit for bit against
  ``tensor.std()`` in ``tests/debugger/test_fused_statistics.py``). Peak memory: one buffer of
  ``CHUNK`` doubles, plus a contiguous copy of a non-contiguous tensor.

On CUDA the small-tensor path applies to every size (torch's CUDA ``std`` is a different
algorithm, so it is not derived): all reductions stay on the device and the host receives one
stacked copy per tensor, instead of one ``.item()`` synchronization per statistic.
"""

from __future__ import annotations

import math
import warnings

import torch

# 64 Ki doubles (512 KiB): the buffer stays in a core's cache between the copy, sum and dot
CHUNK = 1 << 16
_FUSED_DTYPES = frozenset({torch.float32, torch.float64})

# (mean, std, min, max) as 0-d tensors of the tensor's dtype for upstream's reprs (None for
# float64, which upstream gives no statistics), and the ``statistics`` numbers
FusedResult = tuple[tuple[torch.Tensor, ...] | None, dict[str, float | int | None]]


def fused_statistics(data: torch.Tensor) -> FusedResult | None:
    """The statistics of ``data`` (detached, non-empty, strided), or None where the general path must run."""
    if (
        type(data) is not torch.Tensor
        or data.dtype not in _FUSED_DTYPES
        or data.device.type not in ("cpu", "cuda")
        or data.is_quantized
        or data._is_zerotensor()
    ):
        return None
    low, high = torch.aminmax(data)
    mean = data.mean()
    if data.numel() <= CHUNK or data.device.type != "cpu":
        return _small(data, low, high, mean)
    return _large(data, low, high, mean)


def finite_or_none(value: float) -> float | None:
    """``value``, or None (JSON null) for NaN and infinities."""
    return value if math.isfinite(value) else None


def _statistics(mean: float, std: float | None, low: float, high: float) -> dict[str, float | int | None]:
    return {
        "mean": finite_or_none(mean),
        "std": None if std is None else finite_or_none(std),
        "min": low,
        "max": high,
        "nan": 0,
        "posinf": 0,
        "neginf": 0,
    }


def _small(
    data: torch.Tensor, low: torch.Tensor, high: torch.Tensor, mean: torch.Tensor
) -> FusedResult | None:
    count = data.numel()
    with warnings.catch_warnings():  # one element: nan, as upstream records it, without torch's warning
        warnings.simplefilter("ignore", UserWarning)
        std = data.std()
    as_double = data.to(torch.float64)
    scalars = [low, high, mean, std, as_double.mean()] + ([as_double.std()] if count > 1 else [])
    numbers = torch.stack([scalar.to(torch.float64) for scalar in scalars]).tolist()
    low_value, high_value = numbers[0], numbers[1]
    if not (math.isfinite(low_value) and math.isfinite(high_value)):
        return None
    upstream = (mean, std, low, high) if data.dtype == torch.float32 else None
    double_std = numbers[5] if count > 1 else None
    return upstream, _statistics(numbers[4], double_std, low_value, high_value)


def _large(
    data: torch.Tensor, low: torch.Tensor, high: torch.Tensor, mean: torch.Tensor
) -> FusedResult | None:
    low_value, high_value, center = torch.stack((low, high, mean)).to(torch.float64).tolist()
    if not (math.isfinite(low_value) and math.isfinite(high_value)):
        return None
    flat = data.reshape(-1) if data.is_contiguous() else data.contiguous().reshape(-1)
    count = flat.numel()
    buffer = torch.empty(CHUNK, dtype=torch.float64)
    deviations, squares = [], []
    for chunk in flat.split(CHUNK):
        part = buffer[: chunk.numel()]
        part.copy_(chunk).sub_(center)
        deviations.append(part.sum())
        squares.append(torch.dot(part, part))
    deviation = math.fsum(torch.stack(deviations).tolist())
    around_center = math.fsum(torch.stack(squares).tolist())
    if data.dtype == torch.float64:  # the mean and std torch computes for the tensor itself
        return None, _statistics(center, math.sqrt(around_center / (count - 1)), low_value, high_value)
    # the float64 mean, and the sum of squares around it, from the sums around the float32 mean
    double_mean = center + deviation / count
    around_mean = max(around_center - deviation * deviation / count, 0.0)
    # torch's CPU float32 std: around its own float32 mean, accumulated in double, then rounded
    std = torch.tensor(math.sqrt(around_center / (count - 1)), dtype=torch.float32)
    upstream = (mean, std, low, high)
    return upstream, _statistics(double_mean, math.sqrt(around_mean / (count - 1)), low_value, high_value)
