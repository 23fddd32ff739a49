"""Rebuilding recorded arguments: tensors from files and plain literals; anything else named, never guessed."""

import math

import pytest
import torch

from model_debugging.debugger.trace_format.records import TensorRecord
from model_debugging.debugger.trace_format.tensor_files import write_tensor_file
from model_debugging.replay.arguments import Sources, UnrebuildableValue, rebuild_call, rebuild_outputs


def text(sub_path, value):
    return TensorRecord(sub_path=sub_path, text=value)


def tensor_file(tmp_path, sub_path, tensor):
    path = tmp_path / f"{sub_path}.safetensors"
    write_tensor_file(path, tensor)
    return TensorRecord(sub_path=sub_path, shape=tuple(tensor.shape), dtype=repr(tensor.dtype), file=path)


def test_tensors_literals_and_nested_tuples_come_back(tmp_path):
    cos, sin = torch.ones(2, 3), torch.zeros(2, 3)
    call = rebuild_call(
        (
            tensor_file(tmp_path, "args.0", torch.arange(4.0)),
            text("args.1", "None"),
            text("kwargs.use_cache", "False"),
            text("kwargs.layer_idx", "3"),
            text("kwargs.scaling", "0.125"),
            text("kwargs.eps", "nan"),
            text("kwargs.implementation", "'eager'"),
            tensor_file(tmp_path, "kwargs.position_embeddings.0", cos),
            tensor_file(tmp_path, "kwargs.position_embeddings.1", sin),
        )
    )
    assert torch.equal(call.args[0], torch.arange(4.0)) and call.args[1] is None
    assert call.kwargs["use_cache"] is False and call.kwargs["layer_idx"] == 3
    assert call.kwargs["scaling"] == 0.125 and math.isnan(call.kwargs["eps"])
    assert call.kwargs["implementation"] == "eager"
    rebuilt_cos, rebuilt_sin = call.kwargs["position_embeddings"]
    assert torch.equal(rebuilt_cos, cos) and torch.equal(rebuilt_sin, sin)


def test_a_call_without_arguments_has_none():
    call = rebuild_call(())
    assert call.args == () and call.kwargs == {}


@pytest.mark.parametrize(
    ("record", "where", "reason"),
    [
        (
            text("kwargs.past_key_values", "DynamicCache(layers=[])"),
            "kwargs.past_key_values",
            "not a plain literal",
        ),
        (
            TensorRecord(
                sub_path="args.0", shape=(2,), dtype="torch.float32", value_lines=("tensor([1., 2.])",)
            ),
            "args.0",
            "use_repr=False",
        ),
        (text("args.1", "1"), "args.0", "not in the trace"),
        (text("kwargs.block", "<module Toy.blocks.0>"), "kwargs.block", "refers to the module Toy.blocks.0"),
    ],
    ids=["object repr", "tensor repr", "gap in args", "module without a candidate"],
)
def test_what_cannot_be_rebuilt_is_named_with_the_reason(record, where, reason):
    with pytest.raises(UnrebuildableValue) as caught:
        rebuild_call((record,))
    assert caught.value.sub_path == where
    assert reason in caught.value.reason


def test_a_module_reference_becomes_the_candidates_module():
    block = torch.nn.Linear(2, 2)
    call = rebuild_call(
        (text("args.0", "<module Toy.blocks.0>"),), Sources(modules={"Toy.blocks.0": block}.__getitem__)
    )
    assert call.args == (block,)


def test_outputs_come_back_as_the_value_or_the_tuple(tmp_path):
    single = tensor_file(tmp_path, "", torch.ones(2))
    assert torch.equal(rebuild_outputs((single,)), torch.ones(2))
    pair = (tensor_file(tmp_path, "0", torch.ones(2)), text("1", "None"))
    first, second = rebuild_outputs(pair)
    assert torch.equal(first, torch.ones(2)) and second is None
