"""Writing a ``use_repr=False`` tensor to its own ``.safetensors`` file, as upstream does.

The file holds the tensor under the key ``data`` (contiguous, on CPU), so it is bit for bit the
file upstream writes. It appears under its name only once complete (a killed trace leaves no
truncated tensor file). A failed write raises an ``OSError`` that names the file.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save_file

from model_debugging.reporting.atomic import atomic_write_with


def write_tensor_file(path: Path, tensor: torch.Tensor) -> None:
    """Write ``tensor`` to ``path`` under the key ``data``."""
    try:
        data = {"data": tensor.detach().contiguous().cpu()}
        # no fsync per tensor: a trace writes hundreds of them inside the timed forward
        atomic_write_with(path, lambda temporary: save_file(data, str(temporary)), durable=False)
    except Exception as error:  # safetensors' own error (disk full, ...) does not name the file
        raise OSError(f"could not write the tensor file {path}: {error}") from error
