"""Statistics of a finite float32/float64 tensor in one pass after torch's own, with one host copy.

The general path (:mod:`.statistics`) copies the tensor to float64, masks non-finite values and
runs eight reductions, each read back with its own ``.item()``. Here, on CPU:

- ``aminmax`` and the tensor's own ``mean`` come first (upstream's ``mean``/``min``/``max``,
  computed by torch as upstream computes them). Finite min and max mean every element is finite,
  so the NaN/inf counts are zero and no mask is built; otherwise the caller takes the general
  path, which counts them.
- Then one pass over a contiguous view, ``CHUNK`` elements at a time through a float64 buffer
  that stays in cache (the conversion is exact): the sum of the elements and the sum of their
  squares. From these come the float64 mean and std, and upstream's float32 std: torch's CPU
  ``std`` of a float32 tensor is the sum of squares around the float32 mean, accumulated in
  double and rounded to float32; that sum is the sum around the float64 mean plus
  ``n (mean64 - mean32)^2``. The sum around the mean, taken as ``sum(x^2) - sum(x)^2 / n``, loses
  the bits by which ``sum(x^2)`` exceeds it: when that is more than ``_MAX_CANCELLATION`` times
  (a mean large against the spread), a second pass sums the deviations from the float32 mean
  and their squares instead, as torch does. Either way only the rounding of the additions differs
  from torch's (about 1e-15 relative, far below float32's rounding; checked bit for bit against
  ``tensor.std()`` in ``tests/debugger/test_fused_statistics.py``). Torch's own ``std`` would
  take two more passes (it computes the mean again), and a pass around the mean one more op per
  chunk.
- Each number is read with its ``.item()`` (see :func:`_numbers`), and upstream's four reprs are
  printed from those numbers.

Memory: one buffer of ``CHUNK`` doubles per thread computing statistics at once, two of them made
at the first trace (:func:`make_buffers`) and kept (a new one per tensor cost a fresh 512 KiB
mapping, zeroed by the kernel, up to a hundred times a forward, and grew every forward's peak by
its size), plus a contiguous copy of a non-contiguous tensor.

On CUDA, torch's ``std`` is a different algorithm, so it is not derived: ``aminmax``, ``mean``,
``std`` and the float64 copy's ``mean``/``std`` run on the device and the host still receives
one stacked copy per tensor, instead of one ``.item()`` synchronization per statistic.
"""

from __future__ import annotations

import math
import struct
import threading
import warnings

import torch

from model_debugging.debugger.single_thread import callers_threads_for, mean_in_callers_order

# 64 Ki doubles (512 KiB): the buffer stays in a core's cache between the copy, sum and dot
CHUNK = 1 << 16
_FUSED_DTYPES = frozenset({torch.float32, torch.float64})
# float64 buffers of CHUNK elements, each used by one thread at a time and kept for the next tensor
# (a new one per tensor is a fresh, zeroed mapping, and grows the peak of the forward it is made in)
_free_buffers: list[torch.Tensor] = []
_buffers_lock = threading.Lock()
_buffers_made = 0


def _buffer() -> torch.Tensor:
    """A buffer no other thread is using (list.pop and append are atomic); given back with ``_free_buffers.append``."""
    try:
        return _free_buffers.pop()
    except IndexError:
        return _new_buffer()


def _new_buffer() -> torch.Tensor:
    global _buffers_made
    with _buffers_lock:
        _buffers_made += 1
    return torch.empty(CHUNK, dtype=torch.float64).fill_(0.0)  # its pages mapped now, not in a later pass


def make_buffers(count: int) -> None:
    """Make buffers until ``count`` exist, each with its memory mapped: called as a trace starts with one
    per thread that computes statistics at once (the forward's and the worker's), so that they are
    made in the first trace, not in whichever later one first has both threads reduce at the same
    moment (its peak memory grew by a buffer)."""
    while _buffers_made < count:
        _free_buffers.append(_new_buffer())


# Around zero, the sum of squares may be at most this many times the sum around the mean (the
# subtraction then loses at most two bits of a double); beyond it, the pass is made around the mean.
_MAX_CANCELLATION = 4.0
_FLOAT32 = struct.Struct("f")

# (mean, std, min, max), each a value of the tensor's dtype, for upstream's reprs (None for
# float64, which upstream gives no statistics), and the ``statistics`` numbers
FusedResult = tuple[tuple[float, float, float, float] | None, dict[str, float | int | None]]


def takes_fused_path(data: torch.Tensor) -> bool:
    """Whether :func:`fused_statistics` computes ``data``'s statistics (unless it holds NaN or infinities)."""
    return (
        type(data) is torch.Tensor
        and data.dtype in _FUSED_DTYPES
        and (data.is_cpu or data.is_cuda)
        and not data.is_quantized
        and not data._is_zerotensor()
    )


def fused_statistics(
    data: torch.Tensor, threads: int | None = None, first_pass: ChunkPass | None = None
) -> FusedResult | None:
    """The statistics of ``data`` (detached, non-empty, strided), or None where the general path must run.

    ``threads``: the thread count the traced code reduces ``data`` on, when this runs on another
    thread (see :func:`.single_thread.mean_without_switching`); this thread's count is then left alone.
    ``first_pass``: the pass over ``data.reshape(-1)`` (contiguous) to use, made beforehand so that
    another thread can share it.
    """
    if not takes_fused_path(data):
        return None
    if not data.is_cpu:  # one copy to the host; stack promotes to float64, exactly
        return device_numbers(torch.stack(device_scalars(data)).tolist(), data)
    if threads is None:
        # one parallel region each on a large tensor; the chunked pass below stays on one thread,
        # where a region per chunk would wait for a descheduled thread hundreds of times on a busy machine
        with callers_threads_for(data):
            low, high = torch.aminmax(data)
            # upstream's text: torch's order of additions on the user's threads
            mean = mean_in_callers_order(data)
    else:
        low, high = torch.aminmax(data)
        mean = mean_in_callers_order(data, threads)
    return _in_one_pass(data, low, high, mean, first_pass)


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


def device_scalars(data: torch.Tensor) -> list[torch.Tensor]:
    """The 0-dim device tensors :func:`device_numbers` reads ``data``'s statistics from (no host copy)."""
    low, high = torch.aminmax(data)
    with warnings.catch_warnings():  # one element: nan, as upstream records it, without torch's warning
        warnings.simplefilter("ignore", UserWarning)
        std = data.std()
    as_double = data.to(torch.float64)
    return [low, high, data.mean(), std, as_double.mean()] + ([as_double.std()] if data.numel() > 1 else [])


def device_numbers(numbers: list[float], data: torch.Tensor) -> FusedResult | None:
    """The statistics of ``data`` from the host copy of its :func:`device_scalars`; None with NaN or inf."""
    low_value, high_value = numbers[0], numbers[1]
    if not (math.isfinite(low_value) and math.isfinite(high_value)):
        return None
    upstream = (numbers[2], numbers[3], low_value, high_value) if data.dtype == torch.float32 else None
    double_std = numbers[5] if data.numel() > 1 else None
    return upstream, _statistics(numbers[4], double_std, low_value, high_value)


class ChunkPass:
    """The chunked pass over ``flat`` (see :func:`_chunk_sums`), which other threads may share.

    The thread computing a tensor's statistics calls :meth:`run`; a thread with nothing else to do
    meanwhile (the forward's, waiting for the worker of :mod:`.background` at the end of a trace)
    may call :meth:`share`: each takes the next chunk not yet taken, until none is left. Every
    chunk is summed alone, on one intra-op thread, through its thread's buffer, so each partial sum
    is the same bits whichever thread makes it; :func:`_sums` adds them exactly (``math.fsum``).
    """

    def __init__(self, flat: torch.Tensor, center: torch.Tensor | float | None = None):
        self._chunks = flat.split(CHUNK)
        self._center = center
        self._sums: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * len(self._chunks)
        self._taken = 0
        self._in_progress = 0
        self._condition = threading.Condition()

    def run(self) -> list[torch.Tensor]:
        """Per chunk, the float64 sum and sum of squares of its elements (minus the center, if given)."""
        self.share()
        with self._condition:  # the chunks another thread took are done
            self._condition.wait_for(lambda: self._in_progress == 0)
        return [number for sums in self._sums for number in sums]

    def share(self) -> None:
        """Sum chunks not taken yet, until there are none left."""
        buffer = _buffer()
        try:
            while True:
                with self._condition:
                    if self._taken == len(self._chunks):
                        return
                    index, self._taken = self._taken, self._taken + 1
                    self._in_progress += 1
                try:
                    chunk = self._chunks[index]
                    part = buffer[: chunk.numel()].copy_(chunk)
                    if self._center is not None:
                        part.sub_(self._center)  # the center is exact in float64: deviations in double
                    self._sums[index] = (part.sum(), torch.dot(part, part))
                finally:
                    with self._condition:
                        self._in_progress -= 1
                        self._condition.notify_all()
        finally:
            _free_buffers.append(buffer)


def _chunk_sums(flat: torch.Tensor, center: torch.Tensor | float | None) -> list[torch.Tensor]:
    """Per chunk of ``flat``, the float64 sum and sum of squares of its elements (minus ``center``, if given).

    What :class:`ChunkPass` computes, on this thread alone: the same chunks through a buffer of the
    same kind, so the same bits, without the bookkeeping that lets other threads share the pass
    (it runs for most recorded tensors, inside the forward).
    """
    buffer = _buffer()
    try:
        sums = []
        count = flat.numel()
        for start in range(0, count, CHUNK):
            size = min(CHUNK, count - start)
            part = buffer[:size].copy_(flat.narrow(0, start, size))
            if center is not None:
                part.sub_(center)  # the center is exact in float64: deviations in double
            sums.append(part.sum())
            sums.append(torch.dot(part, part))
        return sums
    finally:
        _free_buffers.append(buffer)


def finite_double_statistics(data: torch.Tensor) -> dict[str, float | int | None] | None:
    """The float64 ``statistics`` of a floating CPU tensor (float16, bfloat16, ...) in one pass through
    the float64 buffer, without a float64 copy of it; None when it holds NaN or infinities."""
    low, high = _numbers(torch.aminmax(data))
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    flat = data.reshape(-1) if data.is_contiguous() else data.contiguous().reshape(-1)
    count = flat.numel()
    total, squares = _sums(_numbers(_chunk_sums(flat, None)))
    mean = total / count
    around_mean = squares - total * total / count
    if around_mean * _MAX_CANCELLATION < squares:  # the mean is large against the spread: around it
        deviation, around_center = _sums(_numbers(_chunk_sums(flat, mean)))
        mean, around_mean = mean + deviation / count, max(around_center - deviation * deviation / count, 0.0)
    return _statistics(mean, math.sqrt(around_mean / (count - 1)) if count > 1 else None, low, high)


def _numbers(scalars: list[torch.Tensor] | tuple[torch.Tensor, ...]) -> list[float]:
    """The values of 0-dim CPU tensors (each exactly, as a Python float).

    One ``.item()`` each: ``torch.stack(...).tolist()`` costs more on CPU, where there is no copy
    to save (about 40 µs more for a tensor's few numbers, their dtypes mixed).
    """
    return [scalar.item() for scalar in scalars]


def _sums(partial: list[float]) -> tuple[float, float]:
    return math.fsum(partial[0::2]), math.fsum(partial[1::2])


def _in_one_pass(
    data: torch.Tensor,
    low: torch.Tensor,
    high: torch.Tensor,
    mean: torch.Tensor,
    first_pass: ChunkPass | None = None,
) -> FusedResult | None:
    flat = data.reshape(-1) if data.is_contiguous() else data.contiguous().reshape(-1)
    count = flat.numel()
    sums = _chunk_sums(flat, None) if first_pass is None else first_pass.run()
    numbers = _numbers([low, high, mean, *sums])
    low_value, high_value, center, *partial = numbers
    if not (math.isfinite(low_value) and math.isfinite(high_value)):
        return None  # the sums above are then meaningless; the general path counts NaN and inf
    total, squares = _sums(partial)
    around_mean = squares - total * total / count  # the float64 sum of squares around the float64 mean
    if around_mean * _MAX_CANCELLATION >= squares:
        double_mean = total / count
        # around the tensor's own mean instead: sum((x - c)^2) = sum((x - m)^2) + n (m - c)^2
        around_center = around_mean + count * (double_mean - center) ** 2
    else:  # the mean is large against the spread: the subtraction above lost too many bits
        deviation, around_center = _sums(_numbers(_chunk_sums(flat, mean)))
        double_mean = center + deviation / count
        around_mean = max(around_center - deviation * deviation / count, 0.0)
    if count == 1:
        double_std, float_std = None, math.nan
    else:
        double_std = math.sqrt(around_mean / (count - 1))
        float_std = math.sqrt(around_center / (count - 1))
    if data.dtype == torch.float64:  # the mean torch computes, and its std to the order of additions
        return None, _statistics(center, None if count == 1 else float_std, low_value, high_value)
    # torch's CPU float32 std: around its own float32 mean, accumulated in double, then rounded
    std = _as_float32(float_std)
    return (center, std, low_value, high_value), _statistics(double_mean, double_std, low_value, high_value)


def _as_float32(value: float) -> float:
    """``value`` rounded to the nearest float32, as C's cast does (inf beyond its range)."""
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
