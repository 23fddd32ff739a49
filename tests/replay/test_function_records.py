"""record_functions: chosen function calls become leaves of the module that runs them."""

import json

import pytest
import torch

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace
from tests.replay import toys


def traced(tmp_path, record_functions):
    model = toys.build_model()
    with model_addition_debugger_context(
        model, debug_path=tmp_path, do_prune_layers=False, use_repr=False, record_functions=record_functions
    ):
        model(toys.toy_inputs())
    return read_trace(tmp_path)


def test_a_python_helper_is_recorded_as_a_child_of_the_module_calling_it(tmp_path):
    trace = traced(tmp_path, ["scale_and_shift"])

    node = next(node for node in trace.nodes if node.function is not None)
    assert node.module_path == "Toy.blocks.0.scale_and_shift"
    assert node.function == "tests.replay.toys.scale_and_shift"
    assert [n.module_path for n in trace.nodes if n.depth == 2][:3] == [
        "Toy.blocks.0.fc_in", "Toy.blocks.0.scale_and_shift", "Toy.blocks.0.fc_out",
    ]  # fmt: skip
    inputs = {record.sub_path: record for record in node.inputs}
    assert inputs["args.1"].text == "<module Toy.blocks.0>"  # the module passed in, not its repr
    assert inputs["kwargs.factor"].text == "0.5"
    assert [record.sub_path for record in node.outputs] == [""]
    assert toys.scale_and_shift.__module__ == "tests.replay.toys"
    assert toys.scale_and_shift.__code__.co_name == "scale_and_shift"  # the wrapper is gone


def test_upstreams_files_hold_only_the_module_calls_and_the_extra_file_the_function_calls(tmp_path):
    trace = traced(tmp_path, ["scale_and_shift"])
    block = json.loads(trace.path.read_text())["children"][1]
    assert [child["module_path"] for child in block["children"]] == [
        "Toy.blocks.0.fc_in",
        "Toy.blocks.0.fc_out",
    ]
    extra = json.loads(trace.path.with_name("Toy_debug_tree_EXTRA.json").read_text())
    helper = extra["tree"]["children"][1]["children"][1]
    assert helper["function"] == "tests.replay.toys.scale_and_shift"
    assert helper["outputs"]["value"].endswith(".safetensors")


def test_a_torch_function_is_recorded_where_it_is_called(tmp_path):
    trace = traced(tmp_path, ["torch.nn.functional.softmax"])

    calls = [node.module_path for node in trace.nodes if node.function == "torch.nn.functional.softmax"]
    assert calls == ["Toy.blocks.0.softmax", "Toy.blocks.1.softmax"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no_such_helper", "no Python function 'no_such_helper' in the modules defining the model's classes"),
        ("torch.no_such_function", "'torch.no_such_function' is not a torch function"),
    ],
)
def test_an_unknown_function_name_is_refused_before_any_forward(tmp_path, name, message):
    model = toys.build_model()
    with (
        pytest.raises(ValueError, match=message),
        model_addition_debugger_context(model, debug_path=tmp_path, record_functions=[name]),
    ):
        pass
    assert model(toys.toy_inputs()).shape == torch.Size([2, 3, 2])
