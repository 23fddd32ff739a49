"""A ``use_repr=False`` tensor in its own ``.safetensors`` file, as upstream writes it, and reading it back.

The file holds the tensor under the key ``data`` (contiguous, on CPU), so it is bit for bit the
file upstream writes with ``safetensors.torch.save_file``: an 8-byte little-endian header length,
the JSON header ``{"data":{"dtype":...,"shape":[...],"data_offsets":[0,n]}}`` padded with spaces
to a multiple of 8 bytes, then the tensor's bytes. It is written here from the tensor's memory
read through a read-only pointer, so a copy-on-write clone (see :mod:`..background`) is written
without being copied, and the write itself lets other Python threads run. It appears under its
name only once complete (a killed trace leaves no truncated tensor file). A failed write raises
an ``OSError`` that names the file; a failed read a ``TraceError`` that does.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from model_debugging.debugger.trace_format.names import TENSOR_KEY
from model_debugging.debugger.trace_format.records import TensorRecord, TraceError
from model_debugging.reporting.atomic import atomic_write_with

# the dtype names of the safetensors format
_FORMAT_DTYPES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.complex64: "C64",
    torch.bool: "BOOL",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint64: "U64",
    torch.uint32: "U32",
    torch.uint16: "U16",
    torch.uint8: "U8",
    torch.float8_e4m3fn: "F8_E4M3",
    torch.float8_e4m3fnuz: "F8_E4M3FNUZ",
    torch.float8_e5m2: "F8_E5M2",
    torch.float8_e5m2fnuz: "F8_E5M2FNUZ",
}
# a new file, written straight through its descriptor (see _write_safetensors)
_NEW_FILE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def write_tensor_file(path: Path, tensor: torch.Tensor) -> None:
    """Write ``tensor`` to ``path`` under the key ``data``."""
    try:
        data = tensor.detach().resolve_conj().resolve_neg().contiguous().cpu()
        # no fsync per tensor: a trace writes hundreds of them inside the timed forward
        atomic_write_with(path, lambda temporary: _write_safetensors(temporary, data), durable=False)
    except Exception as error:  # the file system's or torch's own error does not name the file
        raise OSError(f"could not write the tensor file {path}: {error}") from error


def _write_safetensors(path: Path, data: torch.Tensor) -> None:
    """``data`` (contiguous, on CPU) as the one tensor ``data`` of a new safetensors file at ``path``."""
    if sys.byteorder != "little" or data.dtype not in _FORMAT_DTYPES:  # safetensors converts or refuses
        save_file({TENSOR_KEY: data}, str(path))
        return
    size = data.nbytes
    description = {"dtype": _FORMAT_DTYPES[data.dtype], "shape": list(data.shape), "data_offsets": [0, size]}
    header = json.dumps({TENSOR_KEY: description}, separators=(",", ":")).encode("ascii")
    header += b" " * (-len(header) % 8)
    # the bytes straight to the file descriptor: no buffered file object (its buffer, its flushes)
    fd = os.open(path, _NEW_FILE_FLAGS, 0o666)  # the mode open() gives a new file
    try:
        _write_all(fd, memoryview(len(header).to_bytes(8, "little") + header))
        if size:  # read-only: a mutable pointer would make a copy-on-write clone copy itself
            _write_all(fd, memoryview((ctypes.c_char * size).from_address(data.const_data_ptr())))
    finally:
        os.close(fd)


def _write_all(fd: int, view: memoryview) -> None:
    while view:  # a write may take fewer bytes than given (over 2 GiB on Linux, a signal)
        view = view[os.write(fd, view) :]


def link_tensor_file(existing: Path, path: Path) -> None:
    """Give the tensor file ``existing`` a second name, ``path``, without writing the tensor again.

    A hard link: a new name appears complete at once; a file already at ``path`` is replaced by
    a link made under a temporary name and renamed. A copy of the file where the file system has
    no hard links.
    """
    try:
        try:
            os.link(existing, path)  # one call: the usual case, a name no file has yet
        except FileExistsError:
            _replace_by_link(existing, path)
        except OSError:  # no hard links here (FAT, some network file systems): copy the bytes
            atomic_write_with(path, lambda copy: shutil.copyfile(existing, copy), durable=False)
    except Exception as error:
        raise OSError(
            f"could not write the tensor file {path} (a link to {existing.name}): {error}"
        ) from error


def _replace_by_link(existing: Path, path: Path) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.link")
    try:
        os.link(existing, temporary)
        os.replace(temporary, path)
    finally:
        # gone once renamed; still there when path was already a name of this file (a rename
        # between two names of one file does nothing: nested contexts writing into one directory)
        temporary.unlink(missing_ok=True)


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
