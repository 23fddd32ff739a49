"""The values under a node's ``inputs`` and ``outputs``: their leaves, in the order they are written.

The writer and the reader both walk a node's values with :func:`value_leaves`, so the extra file's
per-tensor items (see :mod:`.extra`) line up with the tensor entries the reader finds. A tensor
entry is a JSON object with a ``dtype`` string naming a torch dtype and a ``shape`` that reads as
``torch.Size([...])``; any other object or list is walked into, anything else is a leaf.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from model_debugging.debugger.trace_format.records import TensorEntry

# "tensor(-8.9514e-01, device='cuda:0')", "tensor(nan)", "tensor(0.)", "tensor(1.2500e-01, dtype=torch.bfloat16)"
_STAT_RE = re.compile(r"^tensor\(\s*([-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?))\s*[,)]", re.IGNORECASE)
_SHAPE_RE = re.compile(r"^torch\.Size\(\[([\d,\s]*)\]\)$")


def parse_stat(text: Any) -> float | None:
    """The number in a stats repr such as ``tensor(-8.9514e-01, device='cuda:0')``; None if there is none."""
    match = _STAT_RE.match(text) if isinstance(text, str) else None
    return float(match.group(1)) if match else None


def parse_shape(text: Any) -> tuple[int, ...] | None:
    """``torch.Size([1, 8, 32])`` -> ``(1, 8, 32)``; None if ``text`` is not a shape repr."""
    match = _SHAPE_RE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    return tuple(int(size) for size in match.group(1).replace(" ", "").split(",") if size)


def is_tensor_entry(value: Any) -> bool:
    """Whether ``value`` is a tensor's record (``shape``, ``dtype``, ...) rather than a container to walk into."""
    if type(value) is TensorEntry:  # as the debugger makes them: always a tensor's shape and dtype
        return True
    return (
        isinstance(value, dict)
        and isinstance(value.get("dtype"), str)
        and value["dtype"].startswith("torch.")
        and parse_shape(value.get("shape")) is not None
    )


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def value_leaves(value: Any) -> Iterator[tuple[str, Any, bool]]:
    """``(sub_path, leaf, is_tensor)`` for each tensor entry and other leaf of ``value``, in written order.

    ``sub_path`` joins the keys and list indices on the way with dots (``kwargs.position_embeddings.1``;
    ``""`` for ``value`` itself). Empty lists and objects have no leaves.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if is_tensor_entry(item):
            yield path, item, True
        elif isinstance(item, dict):
            stack.extend((_join(path, key), child) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((_join(path, index), item[index]) for index in range(len(item) - 1, -1, -1))
        else:
            yield path, item, False


def tensor_entries(*values: Any) -> Iterator[dict]:
    """The tensor entries of ``values`` (a node's inputs, then its outputs), in written order."""
    for value in values:
        for _, leaf, is_tensor in value_leaves(value):
            if is_tensor:
                yield leaf
