"""Running the debugger's own tensor work on one intra-op thread.

The statistics, reprs and copies of a trace are hundreds of small torch ops (a 256 x 512 hidden
state takes well under a millisecond). With torch's default of one intra-op thread per core, each
op is a parallel region that waits for every thread: on a busy machine, where a thread is often
descheduled, that wait costs far more than the op (measured on the shared 2-core machine: the
traced forward 1.7x faster with this, see docs/debugger.md). The model's own ops between two
recording steps keep the user's thread count.

A tensor of ``CALLERS_THREADS_FROM`` elements or more (the logits of a language model) is the
exception for its ``aminmax`` and ``mean`` (:func:`callers_threads_for`): each is one op of
milliseconds, far more than a parallel region's wait, as upstream's own ops are. The chunked
float64 pass of the statistics stays on one thread: a region per chunk made the logits'
statistics 2.6 times slower at a load of 3.5 (measured in docs/debugger.md).

The thread count is process-wide in torch, so the switch is reference-counted across the threads
of a process: the first recording step to start saves the count, the last one to end restores it.
A forward running in another thread at that moment runs its ops on one thread too (slower, never
different: torch's results do not depend on the thread count beyond summation order).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TypeVar

import torch

T = TypeVar("T")

_lock = threading.Lock()
_active = 0
_saved_threads = 1


class _OneIntraOpThread:
    """Run the body with ``torch.set_num_threads(1)``, restoring the count when the last user leaves.

    A class rather than a generator: it wraps every recording step, twice per module call.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        global _active, _saved_threads
        with _lock:
            if _active == 0:
                _saved_threads = torch.get_num_threads()
                if _saved_threads > 1:
                    torch.set_num_threads(1)
            _active += 1

    def __exit__(self, *exception: object) -> None:
        global _active
        with _lock:
            _active -= 1
            if _active == 0 and _saved_threads > 1:
                torch.set_num_threads(_saved_threads)


_ONE_INTRA_OP_THREAD = _OneIntraOpThread()


def one_intra_op_thread() -> _OneIntraOpThread:
    """A context running its body with ``torch.set_num_threads(1)`` (reference-counted across threads)."""
    return _ONE_INTRA_OP_THREAD


# torch reduces fewer elements than this on one thread whatever the count (at::internal::GRAIN_SIZE)
_SERIAL_BELOW = 32768


def reducing_threads(tensor: torch.Tensor) -> int:
    """The threads torch would reduce ``tensor`` on in the traced code (1: it reduces it serially)."""
    if not _active or tensor.numel() < _SERIAL_BELOW or not tensor.is_cpu:
        return 1
    return _saved_threads


def core_left_free() -> bool:
    """Whether the traced code's intra-op threads leave one of the cores this process may run on free
    (for the worker thread of :mod:`.background`): torch set to fewer threads than cores."""
    threads = _saved_threads if _active else torch.get_num_threads()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return threads < cores


# from this many elements, a tensor's statistics run on the traced code's threads (one op takes ms)
CALLERS_THREADS_FROM = 1 << 20


@contextmanager
def _on_callers_threads(tensor: torch.Tensor, smallest: int = 0) -> Iterator[None]:
    """Run the body on the thread count the traced code would reduce ``tensor`` on, if it has at
    least ``smallest`` elements; the recording step's one thread again afterwards."""
    threads = reducing_threads(tensor)
    if threads <= 1 or tensor.numel() < smallest or torch.get_num_threads() == threads:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(1)


_SAME_THREADS = nullcontext()


def callers_threads_for(tensor: torch.Tensor) -> AbstractContextManager[None]:
    """Inside a recording step, run the body on the traced code's thread count if ``tensor`` is large."""
    if tensor.numel() < CALLERS_THREADS_FROM:  # most tensors: no generator to make and run
        return _SAME_THREADS
    return _on_callers_threads(tensor, CALLERS_THREADS_FROM)


def with_callers_threads(reduction: Callable[[torch.Tensor], T], tensor: torch.Tensor) -> T:
    """``reduction(tensor)`` on the thread count the traced code runs with.

    Torch's CPU float reductions add in an order that depends on the thread count, so the float32
    ``mean`` of a large tensor can differ in its last bits (and, rarely, in its printed text)
    between 1 and 2 threads: upstream's ``mean``/``std`` reprs must come from the caller's count.
    """
    with _on_callers_threads(tensor):
        return reduction(tensor)


@functools.cache
def _openmp_backend() -> bool:
    return "parallel backend: OpenMP" in torch.__config__.parallel_info()


def mean_without_switching(tensor: torch.Tensor, threads: int) -> bool:
    """Whether :func:`mean_in_callers_order` computes ``tensor``'s mean on ``threads`` without changing
    this thread's count (so also on a thread other than the traced code's)."""
    return threads <= 1 or (
        tensor.is_contiguous()
        and tensor.is_cpu
        and tensor.dtype in (torch.float32, torch.float64)
        and _openmp_backend()
    )


def mean_in_callers_order(tensor: torch.Tensor, threads: int | None = None) -> torch.Tensor:
    """``torch.mean(tensor)`` exactly as the traced code's thread count computes it, on this thread.

    On T threads, torch (OpenMP backend) sums a contiguous CPU tensor of n elements in up to T
    ranges of ceil(n / ranges) elements (no range under ``_SERIAL_BELOW``), each into its row of a
    T-row buffer of the tensor's dtype, then sums that buffer and divides by n. Doing the same here
    gives the same bits without a parallel region, whose wait for a second thread costs
    milliseconds on a busy machine (checked against torch in tests/debugger/test_thread_count.py).
    ``threads`` is :func:`reducing_threads` of the tensor, taken where the traced code runs (by
    default here). Anything else is computed by :func:`with_callers_threads`.
    """
    threads = reducing_threads(tensor) if threads is None else threads
    if threads <= 1 or torch.get_num_threads() == threads:  # the caller's count is already torch's
        return torch.mean(tensor)
    count = tensor.numel()
    if not mean_without_switching(tensor, threads):
        return with_callers_threads(torch.mean, tensor)
    ranges = min(threads, -(-count // _SERIAL_BELOW))
    partials = torch.zeros(threads, dtype=tensor.dtype)
    for index, part in enumerate(tensor.reshape(-1).split(-(-count // ranges))):
        partials[index] = part.sum()
    return partials.sum().div_(count)
