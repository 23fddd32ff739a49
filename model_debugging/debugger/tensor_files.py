"""Writing a ``use_repr=False`` tensor to its own ``.safetensors`` file, as upstream does.

The file holds the tensor under the key ``data`` (contiguous, on CPU), so it is bit for bit the
file upstream writes. A failed write raises an ``OSError`` that names the file.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save_file


def write_tensor_file(path: Path, tensor: torch.Tensor) -> None:
    """Write ``tensor`` to ``path`` under the key ``data``."""
    try:
        save_file({"data": tensor.detach().contiguous().cpu()}, str(path))
    except Exception as error:  # safetensors' own error (disk full, ...) does not name the file
        raise OSError(f"could not write the tensor file {path}: {error}") from error
