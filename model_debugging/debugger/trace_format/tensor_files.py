"""A ``use_repr=False`` tensor in its own ``.safetensors`` file, as upstream writes it, and reading it back.

The file holds the tensor under the key ``data`` (contiguous, on CPU), so it is bit for bit the
file upstream writes. It appears under its name only once complete (a killed trace leaves no
truncated tensor file). A failed write raises an ``OSError`` that names the file; a failed read
a ``TraceError`` that does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from model_debugging.debugger.trace_format.names import TENSOR_KEY
from model_debugging.debugger.trace_format.records import TensorRecord, TraceError
from model_debugging.reporting.atomic import atomic_write_with


def write_tensor_file(path: Path, tensor: torch.Tensor) -> None:
    """Write ``tensor`` to ``path`` under the key ``data``."""
    try:
        data = {TENSOR_KEY: tensor.detach().contiguous().cpu()}
        # no fsync per tensor: a trace writes hundreds of them inside the timed forward
        atomic_write_with(path, lambda temporary: save_file(data, str(temporary)), durable=False)
    except Exception as error:  # safetensors' own error (disk full, ...) does not name the file
        raise OSError(f"could not write the tensor file {path}: {error}") from error


def link_tensor_file(existing: Path, path: Path) -> None:
    """Give the tensor file ``existing`` a second name, ``path``, without writing the tensor again.

    A hard link, made under a temporary name and renamed (so ``path`` appears complete, replacing
    any file there); a copy of the file where the file system has no hard links.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.link")
    try:
        try:
            os.link(existing, temporary)
        except OSError:  # no hard links here (FAT, some network file systems): copy the bytes
            atomic_write_with(path, lambda copy: shutil.copyfile(existing, copy), durable=False)
        else:
            os.replace(temporary, path)
    except Exception as error:
        temporary.unlink(missing_ok=True)
        raise OSError(
            f"could not write the tensor file {path} (a link to {existing.name}): {error}"
        ) from error


def read_tensor_file(path: Path) -> torch.Tensor:
    """The tensor a trace's ``.safetensors`` file holds under the key ``data``."""
    if not path.is_file():
        raise TraceError(path, "tensor file named in the trace is missing")
    try:
        with safe_open(path, framework="pt") as handle:
            return handle.get_tensor(TENSOR_KEY)
    except (SafetensorError, OSError, KeyError) as error:
        raise TraceError(path, f"cannot read tensor {TENSOR_KEY!r}: {error}") from None


def read_recorded_tensor(record: TensorRecord) -> torch.Tensor:
    """The tensor of ``record``'s file, checked against the dtype and shape the trace records for it."""
    tensor = read_tensor_file(record.file)
    if repr(tensor.dtype) != record.dtype or tuple(tensor.shape) != record.shape:
        raise TraceError(
            record.file,
            f"holds a {tensor.dtype} tensor of shape {list(tensor.shape)}, but the trace records "
            f"{record.dtype} {list(record.shape or ())} for it: the files do not belong to the same trace",
        )
    return tensor
