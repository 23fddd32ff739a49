"""The fast tensor repr must print exactly what torch prints."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model_debugging.debugger.tensor_repr import PrintOptions, scalar_reprs, tensor_repr, value_reprs

DTYPES = [
    torch.float32,
    torch.bfloat16,
    torch.float16,
    torch.float64,
    torch.int64,
    torch.int32,
    torch.uint8,
    torch.bool,
]


@pytest.fixture(autouse=True)
def restore_print_options():
    saved = torch._tensor_str.get_printoptions()
    yield
    torch.set_printoptions(**saved)


def _tensor(shape, dtype, scale, special, seed):
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    if not dtype.is_floating_point:
        high = 255 if dtype == torch.uint8 else 100_000
        return torch.randint(0 if dtype == torch.uint8 else -high, high, shape, generator=generator).to(dtype)
    tensor = torch.randn(shape, generator=generator) * scale
    if special == "zeros":
        tensor.zero_()
    elif special == "integers":
        tensor = tensor.round()
    elif special in ("nan", "inf", "-inf", "-0.0") and tensor.numel():
        tensor.view(-1)[0] = float(special)
    return tensor.to(dtype)


@settings(max_examples=300, deadline=None)
@given(
    shape=st.lists(st.sampled_from([1, 2, 3, 5, 7, 12]), min_size=0, max_size=4),
    dtype=st.sampled_from(DTYPES),
    scale=st.sampled_from([1e-9, 1e-3, 1.0, 1e3, 1e9]),
    special=st.sampled_from(["none", "zeros", "integers", "nan", "inf", "-inf", "-0.0"]),
    options=st.tuples(
        st.sampled_from([2, 4, 6]),
        st.sampled_from([8, 50, 1000]),
        st.sampled_from([1, 3]),
        st.sampled_from([40, 80, 120]),
    ),
    transpose=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_matches_torch_repr(shape, dtype, scale, special, options, transpose, seed):
    precision, threshold, edgeitems, linewidth = options
    torch.set_printoptions(
        precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth, sci_mode=True
    )
    tensor = _tensor(shape, dtype, scale, special, seed)
    if transpose and tensor.dim() >= 2:
        tensor = tensor.transpose(0, 1)
    assert tensor_repr(tensor, PrintOptions.current()) == repr(tensor)


@pytest.mark.parametrize(
    "tensor",
    [
        torch.randn(2, 9, 4, 5, 60),  # summarized: 21600 elements, some dimensions cut
        torch.randn(1, 40, 70),  # summarized
        torch.randn(3, 4, requires_grad=True),  # requires_grad suffix
        torch.randn(3, 4).bfloat16(),  # dtype suffix
        torch.empty(0, 3),  # empty: torch's own path
        torch.nn.Parameter(torch.randn(2, 2)),  # subclass: torch's own path
        torch.randn(4, 4, dtype=torch.complex64),  # complex: torch's own path
        -torch.randn(3),
    ],
)
def test_matches_torch_repr_for_special_tensors(tensor):
    torch.set_printoptions(sci_mode=True, linewidth=120)
    assert tensor_repr(tensor, PrintOptions.current()) == repr(tensor)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("value", [0.0, -0.0, 1.5e-7, -3.25, math.inf, -math.inf, math.nan, 123456.0])
def test_scalar_reprs_match_torch(dtype, value):
    torch.set_printoptions(sci_mode=True, linewidth=120)
    scalars = [torch.tensor(value, dtype=dtype), torch.tensor(2.0, dtype=dtype)]
    assert scalar_reprs(scalars, PrintOptions.current()) == [repr(scalar) for scalar in scalars]


@pytest.mark.parametrize("default_dtype", [torch.float32, torch.float64])  # float64: a dtype= suffix
@pytest.mark.parametrize("value", [0.0, -0.0, 1.5e-7, -3.25, math.inf, -math.inf, math.nan, 123456.0])
def test_value_reprs_print_what_torch_prints_for_those_values(default_dtype, value):
    saved = torch.get_default_dtype()
    torch.set_default_dtype(default_dtype)
    try:
        torch.set_printoptions(sci_mode=True, linewidth=120)
        scalars = [torch.tensor(value, dtype=torch.float32), torch.tensor(2.0, dtype=torch.float32)]
        like = torch.ones(3, dtype=torch.float32)
        texts = value_reprs([scalar.item() for scalar in scalars], like, PrintOptions.current())
        assert texts == [repr(scalar) for scalar in scalars]
    finally:
        torch.set_default_dtype(saved)
