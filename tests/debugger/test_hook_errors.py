"""An exception raised by a forward hook is marked on the module whose hook raised it.

torch runs a module's forward hooks after its ``forward`` returned, outside the ``forward`` the
debugger wraps, so the exception first meets the wrapper of the calling module; the trace must
still name the module the user hooked. Upstream's debugger writes no files for a forward that
raised, so the mark lives in our extra file only.
"""

import json

import pytest
import torch
from torch import nn

from model_debugging import model_addition_debugger_context, read_trace
from tests.ports import llama

Q_PROJ = "LlamaForCausalLM.model.layers.0.self_attn.q_proj"


def _raise(*_):
    raise RuntimeError("hook refused the tensor")


def _raised_at(directory) -> dict:
    return {node.module_path: node.exception for node in read_trace(directory).nodes if node.exception}


def _nodes(node):
    yield node
    for child in node.get("children", []):
        yield from _nodes(child)


def _traced(model, directory, inputs):
    with (
        pytest.raises(RuntimeError, match="hook refused"),
        model_addition_debugger_context(model, directory, do_prune_layers=False),
    ):
        model(**inputs)


def test_forward_hook_on_a_leaf_is_marked_on_that_leaf(fresh_llama, tmp_path):
    fresh_llama.model.layers[0].self_attn.q_proj.register_forward_hook(_raise)
    _traced(fresh_llama, tmp_path, {"input_ids": torch.tensor([[1, 2, 3]])})
    assert _raised_at(tmp_path) == {Q_PROJ: "RuntimeError: hook refused the tensor"}
    summary = json.loads((tmp_path / "LlamaForCausalLM_debug_tree_SUMMARY.json").read_text())
    (q_proj,) = [node for node in _nodes(summary) if node["module_path"] == Q_PROJ]
    # its forward ran: outputs recorded as upstream records a leaf, and no key of ours in this file
    assert list(q_proj) == ["module_path", "inputs", "outputs"]


def test_forward_hook_on_a_child_of_the_model_is_marked_on_that_child(fresh_llama, tmp_path):
    fresh_llama.lm_head.register_forward_hook(_raise)
    _traced(fresh_llama, tmp_path, {"input_ids": torch.tensor([[1, 2, 3]])})
    assert _raised_at(tmp_path) == {"LlamaForCausalLM.lm_head": "RuntimeError: hook refused the tensor"}


def test_forward_hook_of_a_module_called_twice_marks_the_call_that_raised(tmp_path):
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Linear(2, 2)

        def forward(self, x):
            return self.shared(self.shared(x))

    model = Twice()
    calls = []

    def second_call_raises(module, args, output):
        calls.append(output)
        if len(calls) == 2:
            _raise()

    model.shared.register_forward_hook(second_call_raises)
    _traced(model, tmp_path, {"x": torch.ones(1, 2)})
    first, second = read_trace(tmp_path).nodes[1:]
    assert (first.exception, second.exception) == (None, "RuntimeError: hook refused the tensor")


def test_forward_pre_hook_is_marked_on_the_caller(fresh_llama, tmp_path):
    """q_proj never ran (its pre-hook raised first): no call of it to mark, as in upstream's tree."""
    fresh_llama.model.layers[0].self_attn.q_proj.register_forward_pre_hook(_raise)
    _traced(fresh_llama, tmp_path, {"input_ids": torch.tensor([[1, 2, 3]])})
    assert _raised_at(tmp_path) == {
        "LlamaForCausalLM.model.layers.0.self_attn": "RuntimeError: hook refused the tensor"
    }


def test_forward_hook_on_a_hand_written_port(tmp_path):
    pytest.importorskip("transformers")
    port = llama.port(llama.reference())
    port.blocks[1].attn.o.register_forward_hook(_raise)
    _traced(port, tmp_path, llama.inputs())
    assert _raised_at(tmp_path) == {"Port.blocks.1.attn.o": "RuntimeError: hook refused the tensor"}
