"""Statistics of accelerator tensors reach the host in one transfer per recorded call.

There is no GPU where these tests run: CPU tensors stand in for device ones (the debugger is told
they stay on their device), which exercises the same batching and gives the same text as upstream.
"""

import torch
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger import device_statistics, tensors


class Pair(nn.Module):
    def forward(self, first, second):
        return first * 2, second + 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pair = Pair()

    def forward(self, first, second):
        doubled, shifted = self.pair(first, second)
        return doubled + shifted


def trace(directory, first, second):
    model = Model()
    with model_addition_debugger_context(model, debug_path=directory, do_prune_layers=False):
        model(first, second)
    return {
        kind: (directory / f"Model_debug_tree_{kind}.json").read_text()
        for kind in ("FULL_TENSORS", "SUMMARY")
    }


def test_each_call_copies_its_statistics_to_the_host_once(tmp_path, monkeypatch):
    first = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    second = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    second[0, 0] = float("nan")  # its statistics take the general path once read
    on_host = trace(tmp_path / "host", first, second)

    monkeypatch.setattr(tensors, "threads_off_thread", lambda tensor: None)
    monkeypatch.setattr(tensors, "stays_on_device", lambda tensor: tensor.is_floating_point())
    transfers = []
    real_copy = device_statistics.to_host
    monkeypatch.setattr(
        device_statistics, "to_host", lambda scalars: transfers.append(len(scalars)) or real_copy(scalars)
    )
    on_device = trace(tmp_path / "device", first, second)

    # six numbers for each of the root's two inputs, then of the pair's two outputs; the pair's
    # inputs are the root's, unchanged: their entries are reused, nothing is read again (and the
    # root has a submodule, so its outputs are not recorded, as upstream does)
    assert transfers == [12, 12]
    assert on_device == on_host
