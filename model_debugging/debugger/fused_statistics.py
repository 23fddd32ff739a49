"""Statistics of a finite float32/float64 tensor in one pass after torch's own, with one host copy.

The general path (:mod:`.statistics`) copies the tensor to float64, masks non-finite values and
runs eight reductions, each read back with its own ``.item()``. Here, on CPU:

- ``aminmax`` and the tensor's own ``mean`` come first (upstream's ``mean``/``min``/``max``,
  computed by torch as upstream computes them). Finite min and max mean every element is finite,
  so the NaN/inf counts are zero and no mask is built; otherwise the caller takes the general
  path, which counts them.
- Then one pass over a contiguous view, ``CHUNK`` elements at a time through a float64 buffer
  that stays in cache: the sum of deviations from the tensor's own mean and the sum of their
  squares. From these come the float64 mean and std, and upstream's float32 std: torch's CPU
  ``std`` of a float32 tensor is exactly this sum of squares around the float32 mean,
  accumulated in double and rounded to float32, so only the summation order differs (about
  1e-16 relative, far below float32's rounding; checked bit for bit against ``tensor.std()`` in
  ``tests/debugger/test_fused_statistics.py``). Torch's own ``std`` would take two more passes
  (it computes the mean again).
- Every number reaches the host in one ``tolist()`` of one stacked tensor.

Memory: one buffer of ``CHUNK`` doubles per thread, made at its first trace and kept (a new one
per tensor cost a fresh 512 KiB mapping, zeroed by the kernel, up to a hundred times a forward,
and grew every forward's peak by its size), plus a contiguous copy of a non-contiguous tensor.

On CUDA, torch's ``std`` is a different algorithm, so it is not derived: ``aminmax``, ``mean``,
``std`` and the float64 copy's ``mean``/``std`` run on the device and the host still receives
one stacked copy per tensor, instead of one ``.item()`` synchronization per statistic.
"""

from __future__ import annotations

import math
import threading
import warnings

import torch

from model_debugging.debugger.single_thread import mean_in_callers_order

# 64 Ki doubles (512 KiB): the buffer stays in a core's cache between the copy, sum and dot
CHUNK = 1 << 16
_FUSED_DTYPES = frozenset({torch.float32, torch.float64})
_scratch = threading.local()

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
    mean = mean_in_callers_order(data)  # upstream's text: torch's order of additions on the user's threads
    if data.device.type != "cpu":
        return _on_device(data, low, high, mean)
    return _in_one_pass(data, low, high, mean)


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


def _on_device(
    data: torch.Tensor, low: torch.Tensor, high: torch.Tensor, mean: torch.Tensor
) -> FusedResult | None:
    count = data.numel()
    with warnings.catch_warnings():  # one element: nan, as upstream records it, without torch's warning
        warnings.simplefilter("ignore", UserWarning)
        std = data.std()
    as_double = data.to(torch.float64)
    scalars = [low, high, mean, std, as_double.mean()] + ([as_double.std()] if count > 1 else [])
    numbers = torch.stack(scalars).tolist()  # stack promotes to float64, exactly
    low_value, high_value = numbers[0], numbers[1]
    if not (math.isfinite(low_value) and math.isfinite(high_value)):
        return None
    upstream = (mean, std, low, high) if data.dtype == torch.float32 else None
    double_std = numbers[5] if count > 1 else None
    return upstream, _statistics(numbers[4], double_std, low_value, high_value)


def _scratch_buffer() -> torch.Tensor:
    """This thread's float64 buffer of ``CHUNK`` elements."""
    buffer = getattr(_scratch, "buffer", None)
    if buffer is None:
        buffer = _scratch.buffer = torch.empty(CHUNK, dtype=torch.float64)
    return buffer


def _in_one_pass(
    data: torch.Tensor, low: torch.Tensor, high: torch.Tensor, mean: torch.Tensor
) -> FusedResult | None:
    flat = data.reshape(-1) if data.is_contiguous() else data.contiguous().reshape(-1)
    count = flat.numel()
    buffer = _scratch_buffer()
    sums = [low, high, mean]
    for chunk in flat.split(CHUNK):
        part = buffer[: chunk.numel()]
        part.copy_(chunk).sub_(mean)  # the float32 mean is exact in float64: deviations in double
        sums += (part.sum(), torch.dot(part, part))
    low_value, high_value, center, *partial = torch.stack(sums).tolist()
    if not (math.isfinite(low_value) and math.isfinite(high_value)):
        return None  # the sums above are then meaningless; the general path counts NaN and inf
    deviation = math.fsum(partial[0::2])
    around_center = math.fsum(partial[1::2])
    if count == 1:
        double_std, float_std = None, math.nan
    else:
        # the float64 sum of squares around the float64 mean, from the sums around the tensor's mean
        around_mean = max(around_center - deviation * deviation / count, 0.0)
        double_std = math.sqrt(around_mean / (count - 1))
        float_std = math.sqrt(around_center / (count - 1))
    if data.dtype == torch.float64:  # the mean torch computes, and its std to the order of additions
        return None, _statistics(center, None if count == 1 else float_std, low_value, high_value)
    # torch's CPU float32 std: around its own float32 mean, accumulated in double, then rounded
    std = torch.tensor(float_std, dtype=torch.float32)
    return (mean, std, low, high), _statistics(center + deviation / count, double_std, low_value, high_value)
