"""Recognising a tensor recorded moments ago, unchanged, so its entry is reused instead of recomputed.

A hidden state is typically recorded four times in a row: as a norm's output and as the inputs of
the projections that read it (sometimes through a new view of the same memory, like the slice a
causal LM takes before its head). The version counter cannot prove it unchanged (an in-place
change through ``tensor.data`` does not bump it), so each remembered tensor keeps a snapshot of its
bytes, and a reuse needs a plain tensor with the same memory address, device, shape, strides, dtype
and grad state, whose bytes compare equal to the snapshot (an integer view, so NaN payloads and the
sign of zero count too). The comparison is exact for every write torch sees; the copy-on-write
snapshot below misses one kind: a write through a raw alias (NumPy, DLPack) made before the
tensor was recorded, which changes the snapshot's shared bytes too.

A snapshot is a copy of the tensor taken when it is first recorded. For a CPU tensor that owns its
whole storage it is a lazy, copy-on-write clone (``torch._lazy_clone``): no byte is copied unless
the tensor is written to while remembered (torch then gives the writer a fresh copy first, so the
snapshot keeps the old bytes and the comparison still sees the change); elsewhere it is an eager
copy. While a copy-on-write snapshot still shares the tensor's memory, no write torch saw has
happened (any would have given the tensor a copy of its own, at another address), so the bytes are
equal without comparing them. A reuse saves the statistics, the repr and, with ``use_repr=False``,
the file write (the file is hard-linked to its new name).
Memory is bounded: at most ``WINDOW`` tensors and ``BUDGET_BYTES`` of snapshots, and no tensor over
a quarter of the budget is remembered. The tensor itself is only weakly referenced and its snapshot
is dropped the moment the model frees it, so a snapshot only ever doubles a tensor still in flight.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import NamedTuple

import torch

WINDOW = 6
BUDGET_BYTES = 16 * 1024 * 1024
# views that compare bytes exactly, by element size
_BIT_VIEWS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_LAZY_CLONE = getattr(torch, "_lazy_clone", None)  # private to torch: an eager clone when missing


def _layout(tensor: torch.Tensor) -> tuple:
    """What, besides its bytes, a tensor's entry depends on; the key of the remembered entries.

    A plain tuple (address, device, shape, strides, dtype, grad state): it is made for every
    tensor recorded, inside the forward.
    """
    return (
        tensor.const_data_ptr(),  # data_ptr() would copy a copy-on-write tensor
        tensor.device,
        tensor.shape,
        tensor.stride(),
        tensor.dtype,
        tensor.requires_grad,
        tensor.grad_fn,
    )


class _Remembered(NamedTuple):
    tensor: weakref.ref  # its callback forgets the entry when the tensor dies
    snapshot: torch.Tensor
    entry: dict


def _rememberable(tensor: torch.Tensor) -> bool:
    """A plain strided tensor with real memory (a subclass may print differently)."""
    return (
        type(tensor) is torch.Tensor
        and tensor.layout == torch.strided
        and not tensor.is_nested
        and not tensor.is_meta
    )


def _bits(tensor: torch.Tensor) -> torch.Tensor | None:
    """``tensor`` viewed as integers of the same size (exact comparison), or None when not possible."""
    view_dtype = _BIT_VIEWS.get(tensor.element_size())
    if view_dtype is None or tensor.is_conj() or tensor.is_neg() or tensor.is_quantized:
        return None
    try:
        return tensor.detach().view(view_dtype)
    except RuntimeError:  # a layout torch cannot reinterpret: simply not remembered
        return None


def copy_on_write(tensor: torch.Tensor) -> torch.Tensor | None:
    """A copy-on-write clone of ``tensor`` (no byte copied until either is written to), or None
    where torch cannot make one (not on CPU, a view into a larger storage, torch without it)."""
    # a lazy clone of a view would keep its whole storage (a cache, ...) and copy it all on a write
    if (
        _LAZY_CLONE is not None
        and tensor.is_cpu
        and tensor.storage_offset() == 0
        and tensor.untyped_storage().nbytes() == tensor.nbytes
    ):
        try:
            return _LAZY_CLONE(tensor)
        except RuntimeError:  # a storage torch cannot share this way
            pass
    return None


def unchanging_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of ``tensor`` that later writes to it cannot change, copy-on-write where torch can make one."""
    lazy = copy_on_write(tensor)
    return tensor.clone() if lazy is None else lazy


class RecentTensors:
    """The entries of the last few tensors recorded in one trace, each with a snapshot of its bytes."""

    def __init__(self) -> None:
        # each operation on it is one call under the GIL: the callback of a tensor freed by another
        # thread may pop its own entry at any moment
        self._remembered: OrderedDict[tuple, _Remembered] = OrderedDict()

    def clear(self) -> None:
        self._remembered.clear()

    @staticmethod
    def key(tensor: torch.Tensor) -> tuple | None:
        """What :meth:`entry_of` and :meth:`remember` look ``tensor`` up by; None when it is not
        remembered (not a plain strided tensor with real memory)."""
        return _layout(tensor) if _rememberable(tensor) else None

    def entry_of(self, tensor: torch.Tensor, key: tuple | None) -> dict | None:
        """The entry recorded for ``tensor`` (of :meth:`key` ``key``) if its bytes are unchanged, else None."""
        if key is None:
            return None
        seen = self._remembered.get(key)
        if seen is None:
            return None
        # a copy-on-write snapshot still sharing the tensor's memory proves no write torch saw
        if seen.snapshot.const_data_ptr() != key[0]:
            bits = _bits(tensor)
            if bits is None or not torch.equal(bits, seen.snapshot):
                return None
        try:  # noqa: SIM105 - contextlib.suppress costs three calls, for every tensor recorded
            self._remembered.move_to_end(key)
        except KeyError:  # forgotten meanwhile: the tensor it came from died
            pass
        return seen.entry

    def remember(self, tensor: torch.Tensor, key: tuple | None, entry: dict) -> None:
        """Keep ``entry`` for ``tensor`` (of :meth:`key` ``key``), with a snapshot of its bytes, when
        it is small enough."""
        if key is None:
            return
        size = tensor.numel() * tensor.element_size()
        if size == 0 or size > BUDGET_BYTES // 4:
            return
        bits = _bits(tensor)
        if bits is None:
            return
        self._remembered.pop(key, None)
        while self._remembered and (
            len(self._remembered) >= WINDOW or self._snapshot_bytes() + size > BUDGET_BYTES
        ):
            try:  # noqa: SIM105 - as above
                self._remembered.popitem(last=False)
            except KeyError:  # emptied meanwhile by a tensor dying in another thread
                pass
        remembered = self._remembered
        reference = weakref.ref(tensor, lambda _, key=key: remembered.pop(key, None))
        remembered[key] = _Remembered(reference, unchanging_copy(bits), entry)

    def _snapshot_bytes(self) -> int:
        return sum([seen.snapshot.nbytes for seen in list(self._remembered.values())])
