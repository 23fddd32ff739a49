"""Threads running one model, some capturing and some not, each get exactly their own outputs."""

from __future__ import annotations

import threading
import time

import torch
from torch import nn

from model_debugging.output_capturing import BaseModelOutput, capture_outputs


class SlowBlock(nn.Module):
    """Sleeps in its forward so concurrent calls interleave layer by layer."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, hidden):
        time.sleep(0.002)
        return hidden * self.scale


class Stack(nn.Module):
    _can_record_outputs = {"hidden_states": SlowBlock}

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(SlowBlock(scale) for scale in (2.0, 3.0, 5.0))

    @capture_outputs(tie_last_hidden_states=False)
    def forward(self, hidden, **kwargs):
        for layer in self.layers:
            hidden = layer(hidden)
        return BaseModelOutput(last_hidden_state=hidden)


def run_in_threads(targets) -> list:
    """Start all targets together; return their results (or raise the first error)."""
    barrier = threading.Barrier(len(targets))
    results: list = [None] * len(targets)

    def run(position, target):
        barrier.wait()
        try:
            results[position] = target()
        except BaseException as error:  # re-raised in the main thread
            results[position] = error

    threads = [threading.Thread(target=run, args=(i, target)) for i, target in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def test_a_capturing_and_a_plain_thread_each_get_their_own_outputs():
    model = Stack()

    def capture(start):
        return [model(torch.full((2,), start), output_hidden_states=True) for _ in range(10)]

    def plain(start):
        return [model(torch.full((2,), start)) for _ in range(10)]

    captured, plain_outputs = run_in_threads([lambda: capture(1.0), lambda: plain(7.0)])
    for out in captured:
        assert [h[0].item() for h in out.hidden_states] == [1.0, 2.0, 6.0, 30.0]
    for out in plain_outputs:
        assert out.hidden_states is None and out.last_hidden_state[0].item() == 210.0


def test_two_capturing_threads_do_not_mix_their_hidden_states():
    model = Stack()
    first, second = run_in_threads(
        [
            lambda start=start: model(torch.full((2,), start), output_hidden_states=True)
            for start in (1.0, 10.0)
        ]
    )
    assert [h[0].item() for h in first.hidden_states] == [1.0, 2.0, 6.0, 30.0]
    assert [h[0].item() for h in second.hidden_states] == [10.0, 20.0, 60.0, 300.0]


def test_concurrent_first_captures_install_each_hook_once():
    model = Stack()
    run_in_threads([lambda: model(torch.ones(2), output_hidden_states=True)] * 4)
    assert [len(layer._forward_hooks) for layer in model.layers] == [1, 1, 1]
