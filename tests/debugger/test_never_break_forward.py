"""A forward that works without the debugger works with it; a trace is complete or marked incomplete."""

import json
import logging
import subprocess
import sys
import textwrap
import threading

import pytest
import torch
from safetensors.torch import load_file
from torch import nn

from model_debugging import TraceError, compare_traces, model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace


class Pass(nn.Module):
    def forward(self, value):
        return value


class Holder(nn.Module):
    """Passes its input through a submodule, so both the root and a leaf record it."""

    def __init__(self):
        super().__init__()
        self.leaf = Pass()

    def forward(self, value):
        return self.leaf(value)


def full_trace(directory, name):
    return json.loads((directory / f"{name}_debug_tree_FULL_TENSORS.json").read_text())


class DataChange(nn.Module):
    def __init__(self):
        super().__init__()
        self.before = Pass()
        self.after = Pass()

    def forward(self, x):
        self.before(x)
        x.data.mul_(100)  # no version bump: nothing torch offers tells the values changed
        return self.after(x)


@pytest.mark.parametrize("use_repr", [True, False])
def test_an_in_place_change_through_data_is_recorded(tmp_path, use_repr):
    model = DataChange()
    with model_addition_debugger_context(
        model, debug_path=tmp_path, use_repr=use_repr, do_prune_layers=False
    ):
        model(torch.ones(2, 3))
    before, after = full_trace(tmp_path, "DataChange")["children"]
    entry = after["inputs"]["args"][0]
    assert before["inputs"]["args"][0]["mean"] == "tensor(1.0000e+00)"
    assert entry["mean"] == "tensor(1.0000e+02)"
    assert dict(read_trace(tmp_path).nodes[2].inputs[0].statistics)["mean"] == 100.0
    if use_repr:
        assert entry["value"][0] == "tensor([[1.0000e+02, 1.0000e+02, 1.0000e+02],"
    else:
        assert torch.equal(load_file(tmp_path / entry["value"][2:])["data"], torch.full((2, 3), 100.0))


class RaisingRepr(torch.Tensor):
    def __repr__(self, *args, **kwargs):
        raise RuntimeError("no repr for you")


class RaisingStd(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.std:
            raise RuntimeError("no std for you")
        return super().__torch_function__(func, types, args, kwargs or {})


def self_referential_list():
    value = [torch.ones(1)]
    value.append(value)
    return value


def odd_values():
    from torch.masked import masked_tensor

    yield "self-referential list", self_referential_list()
    yield (
        "strided nested tensor",
        torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.strided),
    )
    yield "masked tensor", masked_tensor(torch.ones(3), torch.tensor([True, False, True]))
    yield "repr raises", torch.ones(2).as_subclass(RaisingRepr)
    yield "std raises", torch.ones(2).as_subclass(RaisingStd)
    yield "bits8", torch.zeros(2, dtype=torch.uint8).view(torch.bits8)
    yield "uint7", torch.empty(2, dtype=torch.uint7)


@pytest.mark.parametrize("use_repr", [True, False])
@pytest.mark.parametrize(("label", "value"), list(odd_values()), ids=[label for label, _ in odd_values()])
def test_values_the_debugger_cannot_record_become_placeholders(tmp_path, use_repr, label, value):
    model = Holder()
    with model_addition_debugger_context(model, debug_path=tmp_path, use_repr=use_repr):
        output = model(value)
    assert output is value
    text = (tmp_path / "Holder_debug_tree_FULL_TENSORS.json").read_text()
    json.loads(text)  # a well-formed trace
    if label in ("self-referential list", "repr raises", "std raises", "strided nested tensor"):
        assert "not recorded" in text, text


class Nest(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.inner = Nest(depth - 1) if depth else nn.Linear(2, 2)

    def forward(self, x):
        return self.inner(x)


@pytest.mark.parametrize("use_repr", [True, False])
def test_a_model_nested_200_levels_deep_is_traced(tmp_path, use_repr):
    model = Nest(200)
    with model_addition_debugger_context(model, debug_path=tmp_path, use_repr=use_repr):
        model(torch.ones(1, 2))
    trace = compare_traces(tmp_path, tmp_path)
    assert trace.equivalent and len(trace.modules) == 202
    tensor_files = {path.name for path in tmp_path.glob("*.safetensors")}
    assert len(tensor_files) == (0 if use_repr else 202 + 1)  # every module's input, the leaf's output


def test_the_files_of_a_trace_the_debugger_cannot_finish_are_removed(tmp_path, monkeypatch, caplog):
    from model_debugging.debugger.trace_format import writing

    def failing_dump(tree, indent=2):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(writing, "dumps_trace_texts", failing_dump)
    model = Holder()
    with caplog.at_level(logging.WARNING), model_addition_debugger_context(model, tmp_path, use_repr=False):
        output = model(torch.ones(2))
    assert torch.equal(output, torch.ones(2))
    assert list(tmp_path.iterdir()) == []
    assert "could not record this forward (RecursionError" in caplog.text


def test_threads_calling_the_model_get_separate_traces(tmp_path):
    model = Holder()
    barrier = threading.Barrier(4)
    errors = []

    def call(index):
        try:
            barrier.wait()
            for _ in range(3):
                model(torch.full((2,), float(index)))
        except Exception as error:  # reported below: a thread's exception would be lost otherwise
            errors.append(error)

    with model_addition_debugger_context(model, debug_path=tmp_path, use_repr=False):
        threads = [threading.Thread(target=call, args=(index,)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    traces = sorted(tmp_path.glob("*_FULL_TENSORS.json"))
    assert len(traces) == 12
    for path in traces:
        tree = json.loads(path.read_text())
        assert [child["module_path"] for child in tree.get("children", [])] == ["Holder.leaf"]
        root_value = load_file(tmp_path / tree["inputs"]["args"][0]["value"][2:])["data"]
        leaf_value = load_file(tmp_path / tree["children"][0]["inputs"]["args"][0]["value"][2:])["data"]
        assert torch.equal(root_value, leaf_value)  # one thread's call, never another's
    assert not list(tmp_path.glob("*_INCOMPLETE"))


def test_contexts_exited_out_of_order_restore_the_model_exactly(tmp_path):
    model = Holder()
    own = {name: dict(vars(module)) for name, module in model.named_modules()}
    first = model_addition_debugger_context(model, debug_path=tmp_path / "first")
    second = model_addition_debugger_context(model, debug_path=tmp_path / "second")
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    model(torch.ones(2))  # only the second context still traces
    assert not list((tmp_path / "first").glob("*.json"))
    assert len(list((tmp_path / "second").glob("*.json"))) == 3  # SUMMARY, FULL_TENSORS, EXTRA
    second.__exit__(None, None, None)
    assert {name: dict(vars(module)) for name, module in model.named_modules()} == own
    model(torch.ones(2))
    assert len(list((tmp_path / "second").glob("*.json"))) == 3


def test_an_older_trace_is_moved_aside(tmp_path):
    model = Holder()
    (tmp_path / "Holder.safetensors").write_bytes(b"the user's weights, not a trace file")
    for value in (torch.ones(2), torch.zeros(2)):
        with model_addition_debugger_context(model, debug_path=tmp_path, use_repr=False):
            model(value)
    moved = tmp_path / "Holder_previous_trace_1"
    assert sorted(path.name for path in moved.iterdir()) == [
        "Holder.leaf_inputs_args_0.safetensors",
        "Holder.leaf_outputs.safetensors",
        "Holder_debug_tree_EXTRA.json",
        "Holder_debug_tree_FULL_TENSORS.json",
        "Holder_debug_tree_SUMMARY.json",
        "Holder_inputs_args_0.safetensors",
    ]
    assert not compare_traces(moved, tmp_path).equivalent  # each trace kept its own tensors
    assert (tmp_path / "Holder.safetensors").exists()


KILLED_RUN = """
import os, sys, torch
from torch import nn
from model_debugging import model_addition_debugger_context

class Leaf(nn.Module):
    def forward(self, x):
        return x * 2

class Dies(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Leaf()
        self.second = Leaf()

    def forward(self, x):
        x = self.first(x)
        if os.environ.get("KILL"):
            os._exit(9)  # killed mid-forward: the first leaf's tensor files exist, no JSON yet
        return self.second(x)

model = Dies()
with model_addition_debugger_context(model, debug_path=sys.argv[1], use_repr=False):
    model(torch.ones(2))
"""


def test_a_killed_run_leaves_an_incomplete_trace_that_compare_refuses(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(KILLED_RUN))
    directory = tmp_path / "trace"
    subprocess.run([sys.executable, str(script), str(directory)], check=True)
    killed = subprocess.run([sys.executable, str(script), str(directory)], env={"KILL": "1", "PATH": ""})
    assert killed.returncode == 9
    assert (directory / "Dies_debug_tree_INCOMPLETE").exists()
    assert not (directory / "Dies_debug_tree_SUMMARY.json").exists()  # the older trace moved aside first
    with pytest.raises(TraceError, match="incomplete trace"):
        compare_traces(directory, directory)
    assert compare_traces(directory / "Dies_previous_trace_1", directory / "Dies_previous_trace_1").equivalent
