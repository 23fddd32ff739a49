"""The fast statistics path writes what upstream writes and the float64 numbers the general path computes."""

import math

import pytest
import torch

from model_debugging.debugger.fused_statistics import CHUNK
from model_debugging.debugger.statistics import tensor_statistics
from model_debugging.debugger.tensor_repr import PrintOptions


@pytest.fixture
def options():
    saved = torch._tensor_str.get_printoptions()
    torch.set_printoptions(sci_mode=True, linewidth=120)
    yield PrintOptions.current()
    torch.set_printoptions(**saved)


def tensors():
    generator = torch.Generator().manual_seed(0)
    for count in (1, 2, 7, CHUNK, CHUNK + 1, 3 * CHUNK + 17):
        for scale, offset in ((1.0, 0.0), (1e-3, 1e3), (40.0, -7.0)):
            values = torch.randn(count, generator=generator) * scale + offset
            yield values
            yield values.double()
    matrix = torch.randn(512, 3 * CHUNK // 512, generator=generator)
    yield matrix.t()  # not contiguous
    yield matrix[:, ::2]


@pytest.mark.parametrize("tensor", list(tensors()), ids=lambda t: f"{t.dtype}-{tuple(t.shape)}-{t.stride()}")
def test_statistics_match_upstream_text_and_float64_numbers(tensor, options):
    entry, numbers = tensor_statistics(tensor, options)
    if tensor.dtype == torch.float32:  # upstream's four reprs, as torch computes them
        assert entry["mean"] == repr(tensor.mean())
        assert entry["std"] == repr(tensor.std()) if tensor.numel() > 1 else entry["std"] == "tensor(nan)"
        assert (entry["min"], entry["max"]) == (repr(tensor.min()), repr(tensor.max()))
    else:
        assert "mean" not in entry
    values = tensor.double()
    assert (numbers["nan"], numbers["posinf"], numbers["neginf"]) == (0, 0, 0)
    assert (numbers["min"], numbers["max"]) == (float(values.min()), float(values.max()))
    # summed in chunks around the tensor's own mean: another order of additions than torch's
    for name, expected in (("mean", float(values.mean())), ("std", float(values.std()))):
        if tensor.numel() == 1 and name == "std":
            assert numbers["std"] is None
        else:
            assert numbers[name] == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("count", [7, 3 * CHUNK])
@pytest.mark.parametrize("special", [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_counted(special, count, options):
    tensor = torch.linspace(-1, 1, count)
    tensor[5] = special
    _, numbers = tensor_statistics(tensor, options)
    counts = {math.isnan(special): "nan", special == math.inf: "posinf", special == -math.inf: "neginf"}
    assert numbers[counts[True]] == 1
    assert numbers["max"] == 1.0 and numbers["min"] == -1.0  # over the finite elements


def half_tensors():
    generator = torch.Generator().manual_seed(1)
    for dtype in (torch.bfloat16, torch.float16):
        for count in (1, 7, CHUNK + 1):
            for scale, offset in ((1.0, 0.0), (1e-2, 3e2)):  # the second: a mean large against the spread
                yield (torch.randn(count, generator=generator) * scale + offset).to(dtype)
    yield torch.randn(64, 3 * CHUNK // 64, generator=generator).to(torch.bfloat16).t()  # not contiguous


@pytest.mark.parametrize("tensor", list(half_tensors()), ids=lambda t: f"{t.dtype}-{tuple(t.shape)}")
def test_half_precision_statistics_are_torchs_text_and_float64_numbers_without_a_float64_copy(
    tensor, options
):
    entry, numbers = tensor_statistics(tensor, options)
    assert entry["mean"] == repr(tensor.mean())
    assert (entry["min"], entry["max"]) == (repr(tensor.min()), repr(tensor.max()))
    values = tensor.double()
    assert (numbers["min"], numbers["max"], numbers["nan"]) == (float(values.min()), float(values.max()), 0)
    assert numbers["mean"] == pytest.approx(float(values.mean()), rel=1e-12, abs=1e-15)
    if tensor.numel() > 1:
        assert numbers["std"] == pytest.approx(float(values.std()), rel=1e-12, abs=1e-15)
