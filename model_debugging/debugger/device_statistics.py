"""Statistics of tensors on an accelerator, read by the host in one transfer per module call.

Each ``.item()`` or ``.tolist()`` of a CUDA tensor waits for the device to finish everything queued
before it. The fused statistics of a float32/float64 tensor on the device (:func:`.fused_statistics.
device_scalars`: ``aminmax``, ``mean``, ``std`` and the float64 ``mean``/``std``) stay 0-dim device
tensors while one call's inputs (or outputs) are recorded; once they all are, :meth:`DeviceBatch.
flush` stacks every scalar of the call and copies them in one ``tolist()``. A tensor holding NaN or
infinities gets the general path there and then (its values are still those recorded). The entries
get their text on the forward's thread once the forward is over, as the statistics computed off
its thread do (:mod:`.background`).
"""

from __future__ import annotations

import torch

from model_debugging.debugger.fused_statistics import (
    FusedResult,
    device_numbers,
    device_scalars,
    takes_fused_path,
)
from model_debugging.debugger.statistics import Statistics, statistics_from, tensor_statistics
from model_debugging.debugger.tensor_repr import PrintOptions


def stays_on_device(tensor: torch.Tensor) -> bool:
    """Whether ``tensor``'s statistics are batched per call (a non-empty float32/float64 CUDA tensor)."""
    return tensor.is_cuda and tensor.numel() > 0 and takes_fused_path(tensor)


def to_host(scalars: list[torch.Tensor]) -> list[float]:
    """The one device-to-host copy of a call's statistics (stack promotes to float64, exactly)."""
    return torch.stack(scalars).tolist()


class DevicePending:
    """The statistics of one device tensor: numbers read with its call's, text made at the end of the trace."""

    __slots__ = ("_data", "_like", "_numbers", "_statistics")

    def __init__(self, data: torch.Tensor):
        self._data: torch.Tensor | None = data
        self._like = data.new_empty(1)  # the reprs only need its dtype and device
        self._numbers: FusedResult | None = None
        self._statistics: Statistics | None = None

    def read(self, numbers: list[float], options: PrintOptions) -> None:
        """Take this tensor's numbers from the call's host copy; the general path if they say NaN or inf."""
        self._numbers = device_numbers(numbers, self._data)
        if self._numbers is None:
            self._statistics = tensor_statistics(self._data, options)
        self._data = None

    def result(self, options: PrintOptions) -> Statistics:
        if self._statistics is None:
            self._statistics = statistics_from(self._numbers, self._like, options)
        return self._statistics


class DeviceBatch:
    """The device tensors of the call being recorded, whose statistics are not yet on the host."""

    def __init__(self) -> None:
        self._waiting: list[tuple[DevicePending, list[torch.Tensor]]] = []

    def add(self, tensor: torch.Tensor) -> DevicePending:
        data = tensor.detach()
        pending = DevicePending(data)
        self._waiting.append((pending, device_scalars(data)))
        return pending

    def flush(self, options: PrintOptions) -> None:
        """Copy the waiting statistics to the host at once (one synchronization) and hand them out."""
        if not self._waiting:
            return
        waiting, self._waiting = self._waiting, []
        numbers = to_host([scalar for _, scalars in waiting for scalar in scalars])
        start = 0
        for pending, scalars in waiting:
            pending.read(numbers[start : start + len(scalars)], options)
            start += len(scalars)
