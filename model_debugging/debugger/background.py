"""The work of a trace done off the forward's thread: tensor statistics and tensor files.

Most of what a trace costs beyond the forward is per recorded tensor: its statistics (a few passes
over its values) and, with ``use_repr=False``, its ``.safetensors`` file (a copy into the page
cache). Neither is needed before the trace's JSON is written once the forward is over, so one
worker thread (one per process, shared by the traces of all threads) does them in the order they
were asked for, while the forward goes on: the statistics of a contiguous floating CPU tensor
(the numbers, see :func:`.statistics.threads_off_thread`; their text is made on the forward's
thread afterwards; with ``use_repr`` and torch on as many threads as cores, only for tensors of
:data:`.tensors.WORKER_STATISTICS_FROM` elements or more), and every file and the hard links of
reused entries (a link always follows the file it names). A tensor's file is queued before its
statistics and both read one snapshot. The forward's thread computes the statistics the worker has
not started: at its next recording step (:meth:`BackgroundWork.take_over`: the worker is behind, its
core busy) and at the end of the trace (the logits', while the worker writes their file).
The write itself and torch's ops release the GIL. The worker's torch ops run on one thread, so it
never starts a second team of torch threads beside the forward's.

What stays as it was:

- Each file appears under its final name only once complete (written under a temporary name and
  renamed, see :mod:`.trace_format.tensor_files`).
- A queued tensor cannot be changed by the model before the worker reads it: the queue holds a
  copy-on-write clone of a CPU tensor that owns its storage (no byte is copied unless the model
  writes to the tensor meanwhile; torch then gives the model a fresh copy, see :mod:`.reuse`) and
  a private contiguous copy of any other tensor (a view into a larger storage, a non-contiguous or
  non-CPU tensor: that copy was made before the write anyway).
- Memory: at most ``QUEUE_BYTES`` of tensors wait; beyond that the forward's thread first waits
  for the queue to drain (a larger tensor then waits alone). A job that holds no tensor of its
  own (a link, the statistics of a tensor whose file is queued) is queued at once. A tensor is let go once its
  statistics or file are done and the forward's thread has seen it (when it records the next
  call's inputs or outputs, or at the end).
- The forward's thread lets every queued tensor go, never the worker: a job reaches its tensor
  through a box it empties, and the queue keeps the tensor until the forward's thread takes the
  job's result. Torch's copy-on-write storages are not safe to release from two threads at once
  (``COWDeleterContext::decrement_refcount`` takes its lock after the count: a storage freed on
  one thread while its twin is freed or written on the other can corrupt the heap or hang;
  measured: 1 crash in 6,000 traces of a tiny Mixtral over three processes).
- The first write error (an ``OSError`` naming the file) is kept, no later job is attempted,
  and the error is raised by the trace once the forward is over; :meth:`BackgroundWork.wait`
  returns only when nothing is being done, so a trace that is abandoned (the forward raised,
  the recording failed) removes every file it wrote, none is left behind.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import torch

from model_debugging.debugger.fused_statistics import ChunkPass, FusedResult, takes_fused_path
from model_debugging.debugger.reuse import unchanging_copy
from model_debugging.debugger.single_thread import CALLERS_THREADS_FROM, one_intra_op_thread
from model_debugging.debugger.statistics import Statistics, numbers_off_thread, statistics_from
from model_debugging.debugger.tensor_repr import PrintOptions
from model_debugging.debugger.trace_format.tensor_files import link_tensor_file, write_tensor_file

QUEUE_BYTES = 16 * 1024 * 1024


def _one_torch_thread() -> None:
    # thread-local for the forward's thread, which set its own count when it first ran an op
    if torch.get_num_threads() > 1:
        torch.set_num_threads(1)


_worker_lock = threading.Lock()
_worker: tuple[int, ThreadPoolExecutor] | None = None  # (the process it belongs to, the executor)


def _shared_worker() -> ThreadPoolExecutor:
    """The process's one worker thread, made on first use and kept (a new thread per trace, and its
    torch and allocator state, cost time and grew the forward's peak); remade in a forked child."""
    global _worker
    with _worker_lock:
        if _worker is None or _worker[0] != os.getpid():
            executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="model-debugger", initializer=_one_torch_thread
            )
            _worker = (os.getpid(), executor)
        return _worker[1]


class PendingStatistics:
    """The statistics of one tensor: numbers computed by the worker, text made on the forward's thread.

    For a large tensor (the logits), the last recorded in a forward and the longest to reduce, the
    forward's thread, once it waits for the worker, takes chunks of the chunked pass too (see
    :class:`.fused_statistics.ChunkPass`): the same numbers, sooner when a second core is free.
    """

    __slots__ = ("_snapshot", "_threads", "_first_pass", "_numbers", "_statistics")

    def __init__(self, snapshot: torch.Tensor, threads: int):
        self._snapshot: torch.Tensor | None = snapshot
        self._threads = threads
        shareable = (
            snapshot.numel() >= CALLERS_THREADS_FROM
            and snapshot.is_contiguous()
            and takes_fused_path(snapshot)
        )
        self._first_pass = ChunkPass(snapshot.reshape(-1)) if shareable else None
        self._numbers: FusedResult | None = None
        self._statistics: Statistics | None = None

    @property
    def shareable(self) -> bool:
        return self._first_pass is not None

    def compute(self) -> None:
        """On the worker: the numbers (the tensor stays held: see :meth:`let_go`)."""
        self._numbers = numbers_off_thread(self._snapshot, self._threads, self._first_pass)

    def let_go(self) -> None:
        """On the forward's thread, once :meth:`compute` is done: the tensor is let go unless the
        general path needs it (NaN, inf); the reprs only need its dtype and device."""
        self._first_pass = None
        if self._numbers is not None and self._snapshot is not None:
            self._snapshot = self._snapshot.new_empty(1)

    def share(self) -> None:
        """On another thread, before :meth:`compute` ends: take chunks of its pass (see the class)."""
        first_pass = self._first_pass
        if first_pass is not None:
            first_pass.share()

    def result(self, options: PrintOptions) -> Statistics:
        """Upstream's reprs and our numbers, once :meth:`BackgroundWork.wait` has returned."""
        if self._statistics is None:
            self._statistics = statistics_from(self._numbers, self._snapshot, options)
            self._snapshot = None
        return self._statistics


class BackgroundWork:
    """Computes statistics and writes and links the tensor files of one trace, in order, on one worker thread."""

    def __init__(self) -> None:
        self._worker = _shared_worker()
        # each job's future, its size, and what the forward's thread lets go once it is done
        self._pending: deque[tuple[Future, int, Callable[[], None] | torch.Tensor | None]] = deque()
        self._pending_bytes = 0
        self.error: OSError | None = None  # the first failure; set by the worker only
        self.written: list[Path] = []  # the files on disk under their final name, in order
        # large tensors' statistics (see PendingStatistics), with their job's future and box
        self._shareable: list[tuple[PendingStatistics, Future, list[PendingStatistics]]] = []
        # the statistics jobs queued since the last take_over, with their box
        self._queued_statistics: list[tuple[Future, list[PendingStatistics]]] = []

    def statistics(
        self, tensor: torch.Tensor, threads: int, snapshot: torch.Tensor | None = None
    ) -> PendingStatistics:
        """Queue the statistics of ``tensor`` (see :func:`.statistics.threads_off_thread`); it may change once this returns.

        ``snapshot``: what :meth:`write` returned for ``tensor`` just before, read instead of a
        snapshot of its own; its memory is counted once, by the file's job.
        """
        pending = PendingStatistics(
            unchanging_copy(tensor.detach()) if snapshot is None else snapshot, threads
        )
        box = [pending]  # emptied by the job, as in write
        future = self._submit(
            lambda: box.pop().compute(), None, tensor.nbytes if snapshot is None else 0, pending.let_go
        )
        if future is not None:
            self._queued_statistics.append((future, box))
            if pending.shareable:
                self._shareable.append((pending, future, box))
        return pending

    def take_over(self) -> None:
        """Compute on this thread (the forward's, at a recording step) the statistics queued before
        that the worker has not started: it is behind (its core is busy), and each of them holds a
        tensor the model may have freed (a peak of the forward would then include it)."""
        queued, self._queued_statistics = self._queued_statistics, []
        for future, box in queued:
            if box and future.cancel():  # the worker will skip the job; the box is emptied here, not there
                box.pop().compute()

    def write(self, path: Path, tensor: torch.Tensor) -> torch.Tensor:
        """Queue ``tensor``'s file at ``path``; the tensor may change once this returns. Returns the
        unchanging copy the file is written from (see :meth:`statistics`)."""
        data = tensor.detach()
        # otherwise the copy a file needs (contiguous, on CPU) is a private one
        held = unchanging_copy(data) if data.is_cpu and data.is_contiguous() else data.contiguous().cpu()
        box = [held]  # emptied by the job: once it returns, the worker holds no reference to the tensor
        self._submit(lambda: write_tensor_file(path, box.pop()), path, held.nbytes, held)
        return held

    def link(self, existing: Path, path: Path) -> None:
        """Queue a second name, ``path``, for the file ``existing`` (queued before)."""
        self._submit(lambda: link_tensor_file(existing, path), path, 0)

    def wait(self) -> None:
        """Return once every queued job is done (or given up after an error); meanwhile, compute the
        large tensors' statistics the worker has not started (it is still writing the files queued
        before them: the logits' own, with ``use_repr=False``) and take a share of those it has, on
        one intra-op thread as the worker's."""
        shareable, self._shareable = self._shareable, []
        with one_intra_op_thread():
            for pending, future, box in shareable:
                if not future.cancel():  # the worker has started it: take a share of its pass
                    pending.share()
                elif box:  # not started, nor taken over before: all of it here, the box emptied here
                    box.pop().compute()
        while self._pending:
            self._finish_oldest()

    def _submit(
        self,
        job: Callable[[], None],
        path: Path | None,
        size: int,
        release: Callable[[], None] | torch.Tensor | None = None,
    ) -> Future | None:
        """Queue ``job`` and return its future (None after an error: no further job is attempted);
        ``release``: the tensor it reads (held until it is done), or what lets it go."""
        self.let_go_done()
        # a job holding no tensor of its own (a link, statistics reading its file's snapshot) never
        # waits: after a tensor larger than the queue (the logits) it would wait for that file's write
        while size and self._pending and self._pending_bytes + size > QUEUE_BYTES:
            self._finish_oldest()
        if self.error is not None:
            return None
        future = self._worker.submit(self._run, job, path)
        self._pending.append((future, size, release))
        self._pending_bytes += size
        return future

    def _run(self, job: Callable[[], None], path: Path | None) -> None:
        if self.error is not None:
            return
        try:
            job()
        except OSError as error:
            self.error = error
        else:
            if path is not None:
                self.written.append(path)

    def let_go_done(self) -> None:
        """Let the tensors of the jobs done so far go (on the forward's thread, which calls this)."""
        while self._pending and self._pending[0][0].done():
            self._finish_oldest()

    def _finish_oldest(self) -> None:
        future, size, release = self._pending.popleft()
        self._pending_bytes -= size
        if not future.cancelled():  # cancelled: done by wait() on this thread
            future.result()  # the job keeps an OSError; anything else is a debugger bug and surfaces here
        if callable(release):
            release()
        del release  # a held tensor is let go here, on the forward's thread
