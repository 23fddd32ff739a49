"""Inputs a call changes in place: listed in our extra file, read back, and absent where not checked."""

import json

import pytest
import torch
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import TraceError


class RotateInPlace(nn.Module):
    """Applies rotary-style cos/sin to a query in place, as some hand-written ports do."""

    def forward(self, query, position_embeddings):
        cos, sin = position_embeddings
        query.mul_(cos)
        return query + sin


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj, self.rotate, self.o_proj = nn.Linear(4, 4), RotateInPlace(), nn.Linear(4, 4)

    def forward(self, hidden, position_embeddings):
        query = self.q_proj(hidden)
        rotated = self.rotate(query, position_embeddings=position_embeddings)
        return self.o_proj(rotated + query)


def trace_attention(directory, **context):
    torch.manual_seed(0)
    model = Attention()
    cos_sin = (torch.rand(2, 4), torch.rand(2, 4))
    with model_addition_debugger_context(model, debug_path=directory, **context):
        model(torch.ones(2, 4), cos_sin)
    return directory


def test_the_inputs_a_call_changed_in_place_are_read_by_their_path(tmp_path):
    nodes = read_trace(trace_attention(tmp_path)).nodes
    assert [(node.module_path, node.inputs_modified) for node in nodes] == [
        ("Attention", ()),
        ("Attention.q_proj", ()),
        ("Attention.rotate", ("args.0",)),  # the query; cos and sin are left alone
        ("Attention.o_proj", ()),
    ]
    rotate = nodes[2]
    assert [record.sub_path for record in rotate.inputs] == [
        "args.0",
        "kwargs.position_embeddings.0",
        "kwargs.position_embeddings.1",
    ]
    summary = (tmp_path / "Attention_debug_tree_SUMMARY.json").read_text()
    assert "inputs_modified" not in summary  # upstream's files are as upstream writes them


def test_inference_mode_tensors_are_not_checked(tmp_path):
    with torch.inference_mode():
        nodes = read_trace(trace_attention(tmp_path)).nodes
    assert all(node.inputs_modified == () for node in nodes)


def test_a_trace_without_the_extra_file_or_with_an_older_one_says_nothing_was_checked(tmp_path):
    extra_path = trace_attention(tmp_path) / "Attention_debug_tree_EXTRA.json"
    document = json.loads(extra_path.read_text())
    document["version"] = 1  # written before the debugger checked inputs
    extra_path.write_text(json.dumps(document))
    assert all(node.inputs_modified is None for node in read_trace(tmp_path).nodes)
    extra_path.unlink()
    assert all(node.inputs_modified is None for node in read_trace(tmp_path).nodes)


def test_inputs_modified_of_another_type_is_an_error_naming_the_file_and_node(tmp_path):
    extra_path = trace_attention(tmp_path) / "Attention_debug_tree_EXTRA.json"
    document = json.loads(extra_path.read_text())
    document["tree"]["children"][1]["inputs_modified"] = "args.0"
    extra_path.write_text(json.dumps(document))
    with pytest.raises(
        TraceError,
        match=r"Attention_debug_tree_EXTRA.json: node #2 'Attention.rotate': inputs_modified is str 'args.0', "
        "expected a list of input paths",
    ):
        read_trace(tmp_path)


def test_an_in_place_activation_changes_its_one_input(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True), nn.Linear(4, 4))
    with model_addition_debugger_context(model, debug_path=tmp_path):
        model(torch.randn(3, 4))
    nodes = read_trace(tmp_path).nodes
    assert [(node.module_path, node.inputs_modified) for node in nodes] == [
        ("Sequential", ()),
        ("Sequential.0", ()),
        ("Sequential.1", ("args.0",)),
        ("Sequential.2", ()),
    ]
