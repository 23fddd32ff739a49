"""Odd tensors are recorded (or described by their repr) without crashing, in both ``use_repr`` modes.

Each value goes through numbered layer blocks, so it is also recorded the deferred ways layer
pruning uses (kept by reference or copied, formatted once the block is known to stay).
"""

import json
import tempfile
import warnings
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace

DTYPES = [
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
]
NOT_SPARSE = (torch.float8_e4m3fn, torch.float8_e5m2, torch.uint16, torch.uint32, torch.uint64)
TWISTS = ["plain", "nan_inf", "transposed", "strided", "expanded", "conjugated", "meta", "sparse"]
TRACE_PRINT_OPTIONS = {"sci_mode": True, "linewidth": 120}


def make_tensor(shape, dtype, twist, seed):
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_complex:
        tensor = torch.randn(shape, dtype=dtype, generator=generator) * 100
    else:
        tensor = (torch.randn(shape, generator=generator) * 100).to(dtype)
    if twist == "nan_inf" and tensor.numel() and (dtype.is_floating_point or dtype.is_complex):
        flat = tensor.view(-1)
        flat[0] = float("nan")
        flat[-1] = float("inf")
        flat[len(flat) // 2] = -float("inf")
    elif twist == "transposed" and tensor.dim() >= 2:
        tensor = tensor.transpose(0, -1)
    elif twist == "strided" and tensor.dim() >= 1:
        tensor = tensor[..., ::2]
    elif twist == "expanded":
        tensor = tensor.reshape(-1)[:1].expand(5, *tensor.shape[1:]) if tensor.numel() else tensor
    elif twist == "conjugated" and dtype.is_complex:
        tensor = tensor.conj()
    elif twist == "meta":
        tensor = torch.empty(shape, dtype=dtype, device="meta")
    # torch has no sparse form of float8 and of the wide unsigned integers
    elif twist == "sparse" and tensor.dim() >= 1 and dtype not in NOT_SPARSE:
        tensor = tensor.to_sparse()
    return tensor


class Echo(nn.Module):
    def forward(self, value):
        return value


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.echo = Echo()

    def forward(self, value):
        return self.echo(value)


class OddModel(nn.Module):
    def __init__(self, layers=4):
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(layers))

    def forward(self, value):
        for layer in self.layers:
            value = layer(value)
        return value


def tensor_entries(node):
    if isinstance(node, dict):
        if "shape" in node and "dtype" in node:
            yield node
        else:
            for value in node.values():
                yield from tensor_entries(value)
    elif isinstance(node, list):
        for value in node:
            yield from tensor_entries(value)


def expected_repr_lines(tensor):
    saved = torch._tensor_str.get_printoptions()
    torch.set_printoptions(**TRACE_PRINT_OPTIONS)
    try:
        return repr(tensor).splitlines()
    finally:
        torch.set_printoptions(**saved)


def trace_value(value, use_repr, do_prune_layers, directory, layers=4):
    model = OddModel(layers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. ComplexHalf / sparse support warnings from torch itself
        with model_addition_debugger_context(
            model, debug_path=directory, use_repr=use_repr, do_prune_layers=do_prune_layers
        ):
            output = model(value)
    assert output is value
    full = json.loads((directory / "OddModel_debug_tree_FULL_TENSORS.json").read_text())
    summary = json.loads((directory / "OddModel_debug_tree_SUMMARY.json").read_text())
    # what upstream does not record, from our extra file: each entry's statistics, in the same order
    statistics = [
        nested(record.statistics)
        for node in read_trace(directory).nodes
        for record in node.records
        if record.is_tensor
    ]
    entries = list(tensor_entries(full))
    assert len(statistics) == len(entries)
    return list(zip(entries, statistics, strict=True)), list(tensor_entries(summary))


def nested(pairs):
    """The statistics as the extra file holds them (complex parts as "real"/"imag" objects); None when absent."""
    if not pairs:
        return None
    statistics = {}
    for name, number in pairs:
        part, _, key = name.rpartition(".")
        (statistics.setdefault(part, {}) if part else statistics)[key] = number
    return statistics


def raw_bytes(tensor):
    flat = tensor.resolve_conj().reshape(-1).clone(memory_format=torch.contiguous_format)
    return flat.view(torch.uint8) if flat.numel() else torch.empty(0, dtype=torch.uint8)


def check_statistics(value, statistics):
    """Our ``statistics``: for every numeric tensor with values, exact counts and integer stats."""
    numeric = value.dtype.is_floating_point or value.dtype.is_complex or value.dtype in DTYPES
    expects = numeric and value.numel() > 0 and value.layout == torch.strided and value.device.type != "meta"
    assert (statistics is not None) == expects, statistics
    if not expects:
        return
    if value.dtype.is_complex:
        parts = torch.view_as_real(value.resolve_conj().to(torch.complex128))
        checked = [(statistics["real"], parts[..., 0]), (statistics["imag"], parts[..., 1])]
    elif value.dtype.is_floating_point:
        checked = [(statistics, value.to(torch.float64))]
    else:
        as_int = value.to(torch.int64)
        positions = torch.arange(1, as_int.numel() + 1).reshape(as_int.shape)
        assert statistics == {
            "min": int(as_int.min()),
            "max": int(as_int.max()),
            "sum": int(as_int.sum()),
            "weighted_sum": int((as_int * positions).sum()),
        }
        return
    for numbers, values in checked:
        assert numbers["nan"] == int(values.isnan().sum())
        assert numbers["posinf"] == int((values == float("inf")).sum())
        assert numbers["neginf"] == int((values == -float("inf")).sum())
        finite = values[values.isfinite()]
        if finite.numel():
            assert numbers["min"] == float(finite.min()) and numbers["max"] == float(finite.max())
        else:
            assert numbers["min"] is None and numbers["mean"] is None


def check_entries(value, entries, summary_entries, directory):
    assert entries  # the value was recorded (root inputs at least)
    lines = expected_repr_lines(value)
    for entry, statistics in entries:
        assert set(entry) <= {"shape", "dtype", "value", "mean", "std", "min", "max"}  # upstream's keys only
        assert entry["shape"] == repr(value.shape)
        assert entry["dtype"] == repr(value.dtype)
        has_stats = "mean" in entry
        expects_stats = (
            value.dtype in (torch.float16, torch.bfloat16, torch.float32)
            and value.numel() > 0
            and value.layout == torch.strided
        )
        assert has_stats == expects_stats, entry
        check_statistics(value, statistics)
        if isinstance(entry["value"], list):
            assert entry["value"] == lines
        else:
            stored = load_file(directory / entry["value"].removeprefix("./"))["data"]
            assert stored.dtype == value.dtype and stored.shape == value.shape
            # bit for bit, so NaN and -0.0 count as equal to themselves
            assert torch.equal(raw_bytes(stored), raw_bytes(value))
    assert all("value" not in entry for entry in summary_entries)
    assert len(summary_entries) == len(entries)


@settings(derandomize=True, database=None, max_examples=100, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), max_size=3),
    dtype=st.sampled_from(DTYPES),
    twist=st.sampled_from(TWISTS),
    seed=st.integers(0, 2**16),
    use_repr=st.booleans(),
    do_prune_layers=st.booleans(),
)
def test_odd_tensors_are_recorded_in_both_modes(shape, dtype, twist, seed, use_repr, do_prune_layers):
    value = make_tensor(shape, dtype, twist, seed)
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        entries, summary_entries = trace_value(value, use_repr, do_prune_layers, directory)
        check_entries(value, entries, summary_entries, directory)
        storable = value.layout == torch.strided and value.device.type != "meta" and dtype != torch.complex128
        # with use_repr=False a tensor goes to a file whenever safetensors can hold it
        assert all(isinstance(entry["value"], str) == (storable and not use_repr) for entry, _ in entries)


@pytest.mark.parametrize("use_repr", [True, False])
def test_a_very_large_tensor_is_summarized_and_written_whole(use_repr, tmp_path):
    value = torch.randn(2**24)  # 64 MiB: the repr is summarized, the file holds every element
    entries, summary_entries = trace_value(value, use_repr, True, tmp_path, layers=1)
    check_entries(value, entries, summary_entries, tmp_path)
    assert all(len(json.dumps(entry)) < 2000 for entry, _ in entries)
