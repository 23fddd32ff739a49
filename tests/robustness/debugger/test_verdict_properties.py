"""Generated cases: compare's verdicts across dtypes and NaN/Inf, records after in-place
``.data`` changes, contexts exited in any order, and threads interleaving calls in one context."""

import json
import tempfile
import threading
import time
from pathlib import Path

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file
from torch import nn

from model_debugging import compare_traces, model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace

DTYPES = [
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.complex64,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
]
SPECIALS = [float("nan"), float("inf"), -float("inf")]
FEW = settings(derandomize=True, database=None, max_examples=25, deadline=None)


class Leaf(nn.Module):
    """Returns what it was last given through ``value``, to record a tensor as a leaf input."""

    value = None

    def forward(self, x):
        return self.value


def make_value(dtype, size, seed, specials):
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(size, generator=generator) > 0.5
    if not (dtype.is_floating_point or dtype.is_complex):
        info = torch.iinfo(dtype)
        return torch.randint(
            max(info.min, -1000), min(info.max, 1000), (size,), generator=generator, dtype=dtype
        )
    value = (torch.randn(size, generator=generator, dtype=torch.float64) * 10).to(dtype)
    if dtype.is_complex:
        value = torch.complex(torch.randn(size, generator=generator), torch.randn(size, generator=generator))
    for index, special in specials:
        if index < size - 1:  # the last element stays finite: it is the one perturbed
            value[index] = special
    return value


def perturbed(value):
    """``value`` with its last element changed far beyond the default tolerance."""
    changed = value.clone()
    if value.dtype == torch.bool:
        changed[-1] = not bool(value[-1])
    elif value.dtype.is_complex:
        changed[-1] = changed[-1] + 3j  # the imaginary part only
    else:
        changed[-1] = changed[-1] + (1 if not value.dtype.is_floating_point else 64)
    return changed


@FEW
@given(
    dtype=st.sampled_from(DTYPES),
    size=st.integers(1, 40),
    seed=st.integers(0, 2**16),
    specials=st.lists(st.tuples(st.integers(0, 39), st.sampled_from(SPECIALS)), max_size=4),
    use_repr=st.booleans(),
)
def test_a_trace_equals_itself_and_differs_from_a_perturbed_one(
    trace_emitting, dtype, size, seed, specials, use_repr
):
    value = make_value(dtype, size, seed, specials)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        reference = trace_emitting(root / "a", value, use_repr)
        same = trace_emitting(root / "same", value.clone(), use_repr)
        changed = trace_emitting(root / "changed", perturbed(value), use_repr)
        assert compare_traces(reference, same).equivalent
        result = compare_traces(reference, changed)
        assert not result.equivalent, (value, result.summary_lines())
        assert result.divergence_origin.module_path == "Wrapper.emit"


class Steps(nn.Module):
    """Records ``x`` in a leaf, then applies one in-place change through ``x.data``, per step."""

    def __init__(self, steps):
        super().__init__()
        self.steps = steps
        self.leaves = nn.ModuleList(Leaf() for _ in range(len(steps) + 1))

    def forward(self, x):
        for leaf, (operation, operand) in zip(self.leaves, self.steps, strict=False):
            leaf.value = x
            leaf(x)
            getattr(x.data, operation)(operand)
        self.leaves[-1].value = x
        return self.leaves[-1](x)


@FEW
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["mul_", "add_", "fill_"]), st.floats(-50, 50, allow_nan=False)),
        min_size=1,
        max_size=5,
    ),
    use_repr=st.booleans(),
)
def test_records_follow_in_place_changes_through_data(steps, use_repr):
    x = torch.linspace(-1, 1, 6)
    expected = [x.clone()]
    for operation, operand in steps:
        expected.append(getattr(expected[-1].clone(), operation)(operand))
    model = Steps(steps)
    with tempfile.TemporaryDirectory() as directory:
        with model_addition_debugger_context(
            model, debug_path=directory, use_repr=use_repr, do_prune_layers=False
        ):
            model(x)
        for node, value in zip(read_trace(directory).nodes[1:], expected, strict=True):
            record = node.inputs[0]
            assert dict(record.statistics)["max"] == float(value.double().max())
            assert dict(record.statistics)["mean"] == float(value.double().mean())
            if not use_repr:
                assert torch.equal(load_file(record.file)["data"], value)


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(2, 2)
        self.second = nn.Sequential(nn.ReLU(), nn.Linear(2, 2))

    def forward(self, x):
        return self.second(self.first(x))


def instance_state(model):
    return {name: dict(vars(module)) for name, module in model.named_modules()}


@FEW
@given(
    count=st.integers(2, 4),
    data=st.data(),
)
def test_contexts_exited_in_any_order_restore_the_model(count, data):
    model = Pair()
    before = instance_state(model)
    exit_order = data.draw(st.permutations(range(count)))
    calls_after_each_exit = data.draw(st.lists(st.booleans(), min_size=count, max_size=count))
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        contexts = [model_addition_debugger_context(model, debug_path=root / str(i)) for i in range(count)]
        for context in contexts:
            context.__enter__()
        model(torch.ones(1, 2))
        open_contexts = set(range(count))
        expected = {i: 1 for i in range(count)}
        for index, call in zip(exit_order, calls_after_each_exit, strict=True):
            contexts[index].__exit__(None, None, None)
            open_contexts.discard(index)
            if call:
                model(torch.ones(1, 2))
                for still_open in open_contexts:
                    expected[still_open] += 1
        assert instance_state(model) == before
        for index, forwards in expected.items():
            assert len(list((root / str(index)).glob("*_SUMMARY.json"))) == forwards


class Echo(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Leaf()

    def forward(self, x):
        self.inner.value = x
        time.sleep(0.001)  # let other threads run in the middle of the call
        return self.inner(x) + 0


@settings(derandomize=True, database=None, max_examples=10, deadline=None)
@given(threads=st.integers(2, 4), calls=st.lists(st.integers(1, 3), min_size=4, max_size=4))
def test_threads_interleaving_in_one_context_get_one_trace_per_call(threads, calls):
    model = Echo()
    errors = []

    def run(index):
        try:
            for call in range(calls[index]):
                model(torch.full((3,), float(index * 10 + call)))
        except Exception as error:
            errors.append(error)

    with tempfile.TemporaryDirectory() as directory:
        with model_addition_debugger_context(model, debug_path=directory, use_repr=False):
            workers = [threading.Thread(target=run, args=(index,)) for index in range(threads)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
        assert errors == []
        traces = list(Path(directory).glob("*_FULL_TENSORS.json"))
        assert len(traces) == sum(calls[:threads])
        for path in traces:
            tree = json.loads(path.read_text())
            values = [
                load_file(Path(directory) / entry["value"][2:])["data"]
                for entry in (tree["inputs"]["args"][0], tree["children"][0]["inputs"]["args"][0])
            ]
            assert torch.equal(*values)  # the inner call belongs to the same thread's forward
