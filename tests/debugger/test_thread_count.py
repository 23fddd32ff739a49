"""The debugger's own tensor work runs on one intra-op thread; the model and upstream's text keep the user's count."""

import json

import pytest
import torch
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.single_thread import mean_in_callers_order, one_intra_op_thread


class Offset(nn.Module):
    """Returns its input shifted, and remembers the thread count its forward ran with."""

    def __init__(self):
        super().__init__()
        self.threads_seen = []

    def forward(self, values):
        self.threads_seen.append(torch.get_num_threads())
        return values + 0.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Offset()
        self.second = Offset()

    def forward(self, values):
        return self.second(self.first(values))


def large_tensor_whose_mean_text_depends_on_the_thread_count(size=100_000, seed=14):
    # the elements are summed on 2 threads in another order than on one: with these seeds, the
    # float32 mean prints as 1.0001e+00 with 2 threads and 1.0000e+00 with 1 (found by searching)
    values = torch.randn(size, generator=torch.Generator().manual_seed(seed)) * 100
    return values + (1.00005 - values.double().mean().float())


def test_model_runs_on_the_users_threads_and_the_count_is_restored(two_threads, tmp_path):
    model = Model()
    with model_addition_debugger_context(model, debug_path=tmp_path):
        model(torch.ones(4))
    assert model.first.threads_seen == model.second.threads_seen == [2]
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize(
    "size, seed",
    [(100_000, 14), ((1 << 20) + 5, 89)],
    ids=["reduced-on-one-thread", "statistics-on-the-users-threads"],
)
def test_upstream_mean_is_computed_on_the_users_thread_count(two_threads, tmp_path, size, seed):
    values = large_tensor_whose_mean_text_depends_on_the_thread_count(size, seed)
    torch.set_printoptions(sci_mode=True)
    expected = repr(values.mean())  # what upstream records: torch's mean on the user's 2 threads
    torch.set_printoptions(profile="default")
    model = Model()
    with model_addition_debugger_context(model, debug_path=tmp_path):
        model(values)
    trace = json.loads((tmp_path / "Model_debug_tree_SUMMARY.json").read_text())
    assert trace["children"][0]["inputs"]["args"][0]["mean"] == expected == "tensor(1.0001e+00)"
    assert model.first.threads_seen == [2] and torch.get_num_threads() == 2


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_users_mean_is_reproduced_bit_for_bit_on_one_thread(threads, dtype):
    saved = torch.get_num_threads()
    generator = torch.Generator().manual_seed(threads)
    tensors = [
        torch.randn(size, generator=generator, dtype=dtype) * 1e3 + 7 for size in (32_768, 40_001, 65_537)
    ]
    tensors += [
        torch.randn(1, 256, 1536, generator=generator, dtype=dtype),
        torch.randn(3, 333_333, generator=generator, dtype=dtype)[
            1:
        ],  # contiguous, not at its storage's start
        large_tensor_whose_mean_text_depends_on_the_thread_count().to(dtype),
    ]
    try:
        torch.set_num_threads(threads)
        expected = [tensor.mean() for tensor in tensors]
        with one_intra_op_thread():
            assert torch.get_num_threads() == 1
            got = [mean_in_callers_order(tensor) for tensor in tensors]
    finally:
        torch.set_num_threads(saved)
    for tensor, wanted, result in zip(tensors, expected, got, strict=True):
        assert torch.equal(result, wanted), (tuple(tensor.shape), result.item(), wanted.item())
