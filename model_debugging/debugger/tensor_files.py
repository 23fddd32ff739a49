"""Writing ``use_repr=False`` tensors to ``.safetensors`` files off the forward's critical path.

Each tensor is copied when it is submitted (so later in-place changes cannot leak into the
file) and written by one background thread while the forward goes on; safetensors releases
the GIL while it writes. At most ``max_pending_bytes`` of copies wait at any time: a submit
beyond that first waits for the oldest writes.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import torch
from safetensors.torch import save_file

_DEFAULT_MAX_PENDING_BYTES = 64 * 2**20


def _save(data: torch.Tensor, path: Path) -> None:
    try:
        save_file({"data": data}, str(path))
    except Exception as error:  # safetensors' own error (disk full, ...) does not name the file
        raise OSError(f"could not write the tensor file {path}: {error}") from error


class TensorFileWriter:
    """Writes one tensor per file under the key ``data``, like upstream, in the background.

    Args:
        output_dir (`Path`): directory of the files.
        max_pending_bytes (`int`, *optional*, defaults to 64 MiB): bound on the copies waiting to be written.
    """

    def __init__(self, output_dir: Path, max_pending_bytes: int = _DEFAULT_MAX_PENDING_BYTES):
        self._output_dir = output_dir
        self._max_pending_bytes = max_pending_bytes
        self._executor: ThreadPoolExecutor | None = None
        self._pending: deque[tuple[Future, int]] = deque()
        self._pending_bytes = 0
        self._errors: list[BaseException] = []

    def submit(self, file_name: str, tensor: torch.Tensor, *, private: bool = False) -> None:
        """Queue ``tensor`` for ``<output_dir>/<file_name>``; ``private`` means no one else can modify it."""
        data = tensor.detach().contiguous().cpu()
        if not private and data.data_ptr() == tensor.data_ptr():
            data = data.clone()  # still the caller's memory: snapshot it now
        size = data.numel() * data.element_size()
        while self._pending and self._pending_bytes + size > self._max_pending_bytes:
            self._wait_oldest()
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model_debugging_writer")
        future = self._executor.submit(_save, data, self._output_dir / file_name)
        self._pending.append((future, size))
        self._pending_bytes += size

    def wait(self) -> list[BaseException]:
        """Wait for every queued write; return (and forget) the errors they raised."""
        while self._pending:
            self._wait_oldest()
        errors, self._errors = self._errors, []
        return errors

    def close(self) -> None:
        self.wait()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _wait_oldest(self) -> None:
        future, size = self._pending.popleft()
        self._pending_bytes -= size
        error = future.exception()
        if error is not None:
            self._errors.append(error)
