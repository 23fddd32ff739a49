"""Recognising a tensor recorded moments ago, unchanged, so its entry is reused instead of recomputed.

A hidden state is typically recorded four times in a row: as a norm's output and as the inputs of
the projections that read it. The version counter cannot prove it unchanged (an in-place change
through ``tensor.data`` does not bump it), so each remembered tensor keeps a snapshot of its bytes,
and a reuse needs the same tensor object, with the same storage, layout, dtype and grad state,
whose bytes compare equal to the snapshot (an integer view, so NaN payloads and the sign of zero
count too). The comparison is exact: nothing that changes what the trace would record can pass it.

A snapshot costs one copy of a tensor the first time it is recorded; a reuse saves the statistics,
the repr and, with ``use_repr=False``, the file write (the file is hard-linked to its new name).
Memory is bounded: at most ``WINDOW`` tensors and ``BUDGET_BYTES`` of snapshots, and no tensor over
a quarter of the budget is remembered.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import torch

WINDOW = 6
BUDGET_BYTES = 16 * 1024 * 1024
# views that compare bytes exactly, by element size
_BIT_VIEWS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@dataclass(frozen=True)
class _Layout:
    data_ptr: int
    shape: torch.Size
    stride: tuple[int, ...]
    dtype: torch.dtype
    requires_grad: bool
    grad_fn: object

    @classmethod
    def of(cls, tensor: torch.Tensor) -> _Layout:
        return cls(
            tensor.data_ptr(),
            tensor.shape,
            tensor.stride(),
            tensor.dtype,
            tensor.requires_grad,
            tensor.grad_fn,
        )


@dataclass(frozen=True)
class _Remembered:
    tensor: torch.Tensor  # held, so its id cannot be reused by another tensor while remembered
    layout: _Layout
    snapshot: torch.Tensor
    entry: dict


def _bits(tensor: torch.Tensor) -> torch.Tensor | None:
    """``tensor`` viewed as integers of the same size (exact comparison), or None when not possible."""
    view_dtype = _BIT_VIEWS.get(tensor.element_size())
    if view_dtype is None or tensor.is_conj() or tensor.is_neg() or tensor.is_quantized:
        return None
    try:
        return tensor.detach().view(view_dtype)
    except RuntimeError:  # a layout torch cannot reinterpret: simply not remembered
        return None


class RecentTensors:
    """The entries of the last few tensors recorded in one trace, each with a snapshot of its bytes."""

    def __init__(self) -> None:
        self._remembered: OrderedDict[int, _Remembered] = OrderedDict()
        self._bytes = 0

    def clear(self) -> None:
        self._remembered.clear()
        self._bytes = 0

    def entry_of(self, tensor: torch.Tensor) -> dict | None:
        """The entry recorded for ``tensor`` if it is the same tensor with the same bytes, else None."""
        seen = self._remembered.get(id(tensor))
        if seen is None or seen.tensor is not tensor or seen.layout != _Layout.of(tensor):
            return None
        bits = _bits(tensor)
        if bits is None or not torch.equal(bits, seen.snapshot):
            return None
        self._remembered.move_to_end(id(tensor))
        return seen.entry

    def remember(self, tensor: torch.Tensor, entry: dict) -> None:
        """Keep ``entry`` for ``tensor``, with a snapshot of its bytes, when it is small enough."""
        if (
            type(tensor) is not torch.Tensor
            or tensor.layout != torch.strided
            or tensor.is_nested
            or tensor.device.type == "meta"
        ):
            return
        size = tensor.numel() * tensor.element_size()
        bits = _bits(tensor)
        if bits is None or size == 0 or size > BUDGET_BYTES // 4:
            return
        self._forget(id(tensor))
        while self._remembered and (len(self._remembered) >= WINDOW or self._bytes + size > BUDGET_BYTES):
            self._forget(next(iter(self._remembered)))
        self._remembered[id(tensor)] = _Remembered(tensor, _Layout.of(tensor), bits.clone(), entry)
        self._bytes += size

    def _forget(self, key: int) -> None:
        seen = self._remembered.pop(key, None)
        if seen is not None:
            self._bytes -= seen.snapshot.numel() * seen.snapshot.element_size()
