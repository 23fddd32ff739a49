"""An exception raised by a forward hook is marked on the module whose hook raised it; one raised
by a forward pre-hook on the calling module, naming the module whose pre-hook raised it.

torch runs a module's forward hooks after its ``forward`` returned (its pre-hooks before it),
outside the ``forward`` the debugger wraps, so the exception first meets the wrapper of the calling
module; the trace must still name the module the user hooked. Upstream's debugger writes no files
for a forward that raised, so the mark lives in our extra file only.
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


PRE_HOOKED = " (raised by a forward pre-hook of {}, whose forward did not run)"


class _Refuser:
    """A pre-hook written as a callable object."""

    def __call__(self, module, args):
        _raise()


@pytest.mark.parametrize(
    "register",
    [
        lambda module: module.register_forward_pre_hook(_raise),
        lambda module: module.register_forward_pre_hook(
            lambda module, args, kwargs: _raise(), with_kwargs=True
        ),
        lambda module: module.register_forward_pre_hook(_Refuser()),
    ],
    ids=["args", "with_kwargs", "callable_object"],
)
def test_forward_pre_hook_is_marked_on_the_caller_naming_the_hooked_module(fresh_llama, tmp_path, register):
    """q_proj never ran (its pre-hook raised first): no call of it, as in upstream's tree; the call of
    self_attn that called it records the exception in the extra file with q_proj's path."""
    register(fresh_llama.model.layers[0].self_attn.q_proj)
    _traced(fresh_llama, tmp_path, {"input_ids": torch.tensor([[1, 2, 3]])})
    self_attn = "LlamaForCausalLM.model.layers.0.self_attn"
    assert _raised_at(tmp_path) == {
        self_attn: "RuntimeError: hook refused the tensor" + PRE_HOOKED.format(Q_PROJ)
    }
    extra = json.loads((tmp_path / "LlamaForCausalLM_debug_tree_EXTRA.json").read_text())
    (marked,) = [node for node in _nodes(extra["tree"]) if "exception" in node]
    assert marked["module_path"] == self_attn
    assert marked["exception"] == {
        "type": "RuntimeError", "message": "hook refused the tensor", "forward_pre_hook_of": Q_PROJ
    }  # fmt: skip
    summary = (tmp_path / "LlamaForCausalLM_debug_tree_SUMMARY.json").read_text()
    assert "forward_pre_hook_of" not in summary and f'"{Q_PROJ}"' not in summary


def test_a_pre_hook_return_value_torch_refuses_is_marked_as_the_pre_hooks(tmp_path):
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    model[1].register_forward_pre_hook(lambda module, args, kwargs: "not a tuple", with_kwargs=True)
    with (
        pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"),
        model_addition_debugger_context(model, tmp_path, do_prune_layers=False),
    ):
        model(torch.ones(1, 2))
    ((path, text),) = _raised_at(tmp_path).items()
    assert path == "Sequential" and text.endswith(PRE_HOOKED.format("Sequential.1"))


def test_a_forward_that_raises_in_a_module_with_a_pre_hook_is_not_the_pre_hooks(tmp_path):
    """A pre-hook that ran and returned: the exception is the forward's, marked on the module that
    raised it (recorded or not) as without the hook."""

    class Failing(nn.Module):
        def forward(self, x):
            raise RuntimeError("hook refused the tensor: no, the forward did")

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner, self.failing = nn.Linear(2, 2), Failing()

        def forward(self, x):
            return self.failing(self.inner(x))

    model = Outer()
    model.failing.register_forward_pre_hook(lambda module, args: None)
    _traced(model, tmp_path / "all", {"x": torch.ones(1, 2)})
    assert _raised_at(tmp_path / "all") == {
        "Outer.failing": "RuntimeError: hook refused the tensor: no, the forward did"
    }
    with (
        pytest.raises(RuntimeError, match="hook refused"),
        model_addition_debugger_context(
            model, tmp_path / "some", do_prune_layers=False, only_modules="inner"
        ),
    ):
        model(torch.ones(1, 2))  # failing is not recorded: its caller, the root, records the exception
    assert _raised_at(tmp_path / "some") == {
        "Outer": "RuntimeError: hook refused the tensor: no, the forward did"
    }


def test_forward_hook_on_a_hand_written_port(tmp_path):
    pytest.importorskip("transformers")
    port = llama.port(llama.reference())
    port.blocks[1].attn.o.register_forward_hook(_raise)
    _traced(port, tmp_path, llama.inputs())
    assert _raised_at(tmp_path) == {"Port.blocks.1.attn.o": "RuntimeError: hook refused the tensor"}
