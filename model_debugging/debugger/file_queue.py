"""The tensor files of a ``use_repr=False`` trace, written on a worker thread off the forward's path.

A trace writes a file for almost every tensor it records; on the forward's own thread each costs a
file creation, a copy into the page cache and a rename. Here one worker thread per trace writes
them (and makes the hard links of reused entries) in the order they were asked for, so a link
always follows the file it names, while the forward goes on. The write itself releases the GIL.

What stays as it was:

- Each file appears under its final name only once complete (written under a temporary name and
  renamed, see :mod:`.trace_format.tensor_files`).
- A queued tensor cannot be changed by the model before it is written: the queue holds a
  copy-on-write clone of a CPU tensor that owns its storage (no byte is copied unless the model
  writes to the tensor meanwhile; torch then gives the model a fresh copy, see :mod:`.reuse`) and
  a private contiguous copy of any other tensor (a view into a larger storage, a non-contiguous or
  non-CPU tensor: that copy was made before the write anyway).
- Memory: at most ``QUEUE_BYTES`` of tensors wait; beyond that the forward's thread first waits
  for the queue to drain (a larger tensor then waits alone).
- The first write error (an ``OSError`` naming the file) is kept, no later file is attempted,
  and the error is raised by the trace once the forward is over; :meth:`TensorFileQueue.wait`
  returns only when nothing is being written, so a trace that is abandoned (the forward raised,
  the recording failed) removes every file it wrote, none is left behind.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import torch

from model_debugging.debugger.reuse import unchanging_copy
from model_debugging.debugger.trace_format.tensor_files import link_tensor_file, write_tensor_file

QUEUE_BYTES = 16 * 1024 * 1024


class TensorFileQueue:
    """Writes and links the tensor files of one trace, in order, on one worker thread."""

    def __init__(self) -> None:
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-debugger-files")
        self._pending: deque[tuple[Future, int]] = deque()
        self._pending_bytes = 0
        self.error: OSError | None = None  # the first failure; set by the worker only
        self.written: list[Path] = []  # the files on disk under their final name, in order

    def write(self, path: Path, tensor: torch.Tensor) -> None:
        """Queue ``tensor``'s file at ``path``; the tensor may change once this returns."""
        data = tensor.detach()
        if data.device.type == "cpu" and data.is_contiguous():
            held = unchanging_copy(data)
        else:  # the copy a file needs (contiguous, on CPU) is a private one
            held = data.contiguous().cpu()
        size = held.nbytes
        while self._pending and self._pending_bytes + size > QUEUE_BYTES:
            self._finish_oldest()
        self._submit(lambda: write_tensor_file(path, held), path, size)

    def link(self, existing: Path, path: Path) -> None:
        """Queue a second name, ``path``, for the file ``existing`` (queued before)."""
        self._submit(lambda: link_tensor_file(existing, path), path, 0)

    def wait(self) -> None:
        """Return once every queued file is written (or given up after an error)."""
        while self._pending:
            self._finish_oldest()

    def close(self) -> None:
        """Wait for the queued files and end the worker thread."""
        self.wait()
        self._worker.shutdown(wait=True)

    def _submit(self, job: Callable[[], None], path: Path, size: int) -> None:
        if self.error is None:  # after an error, no further file is attempted
            self._pending.append((self._worker.submit(self._run, job, path), size))
            self._pending_bytes += size

    def _run(self, job: Callable[[], None], path: Path) -> None:
        if self.error is not None:
            return
        try:
            job()
        except OSError as error:
            self.error = error
        else:
            self.written.append(path)

    def _finish_oldest(self) -> None:
        future, size = self._pending.popleft()
        self._pending_bytes -= size
        future.result()  # the job keeps an OSError; anything else is a debugger bug and surfaces here
