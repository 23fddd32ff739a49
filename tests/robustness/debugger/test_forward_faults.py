"""A forward that raises anywhere leaves the model exactly as it was and a partial trace naming the culprit."""

import json
import logging
import tempfile
from pathlib import Path

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.modules import module as torch_module

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace


class InjectedError(Exception):
    pass


class InjectedInterrupt(BaseException):
    """Like KeyboardInterrupt: not an Exception, so only ``except BaseException`` sees it."""


class Faulty(nn.Module):
    """Raises ``fault`` when its own name is the one chosen, before or after running its children."""

    def __init__(self):
        super().__init__()
        self.fault_at = None
        self.fault = None

    def maybe_raise(self, moment):
        if self.fault_at == (self.qualified_name, moment):
            raise self.fault


class Leaf(Faulty):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, hidden):
        self.maybe_raise("before")
        return self.proj(hidden)


class Block(Faulty):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = Leaf(width)

    def forward(self, hidden, scale=1.0):
        self.maybe_raise("before")
        hidden = hidden + self.mlp(self.norm(hidden)) * scale
        self.maybe_raise("after")
        return hidden


class FaultyModel(Faulty):
    def __init__(self, width=4, layers=3):
        super().__init__()
        self.embed = nn.Embedding(10, width)
        self.layers = nn.ModuleList(Block(width) for _ in range(layers))
        self.head = Leaf(width)
        self.register_buffer("position", torch.arange(width, dtype=torch.float32))

    def forward(self, input_ids):
        self.maybe_raise("before")
        hidden = self.embed(input_ids) + self.position
        for layer in self.layers:
            hidden = layer(hidden, scale=0.5)
        self.maybe_raise("after")
        return self.head(hidden)


def user_forward_hook(module, args, output):
    return output


def build_model(fault_at, fault):
    torch.manual_seed(0)
    model = FaultyModel()
    for name, module in model.named_modules():
        if isinstance(module, Faulty):
            module.qualified_name, module.fault_at, module.fault = name, fault_at, fault
    # state a user may have put on the model before tracing, which tracing must leave alone
    model.layers[1].register_forward_hook(user_forward_hook)
    model.layers[0].norm.register_forward_pre_hook(lambda module, args: None)
    model.head.forward = model.head.forward  # an instance-level forward of the user's own
    return model


def snapshot(model):
    """Everything tracing could leave behind: values, forwards, hooks and instance attributes."""
    modules = {}
    for name, module in model.named_modules():
        hooks = {
            key: dict(value)
            for key, value in vars(module).items()
            if "hook" in key and isinstance(value, dict)
        }
        modules[name] = {
            "attributes": sorted(vars(module)),
            "own_forward": module.__dict__.get("forward"),
            "class_forward": type(module).forward,
            "hooks": hooks,
            "parameters": {key: id(value) for key, value in module._parameters.items()},
            "training": module.training,
        }
    global_hooks = {
        name: dict(value)
        for name, value in vars(torch_module).items()
        if name.startswith("_global") and isinstance(value, dict)
    }
    return {
        "state": {key: value.clone() for key, value in model.state_dict().items()},
        "modules": modules,
        "global_hooks": global_hooks,
        "print_options": torch._tensor_str.get_printoptions(),
        "grad_enabled": torch.is_grad_enabled(),
        "inference_mode": torch.is_inference_mode_enabled(),
    }


def assert_same(before, after):
    assert before["state"].keys() == after["state"].keys()
    for key, value in before["state"].items():
        assert torch.equal(value, after["state"][key]), key
    assert {key: value for key, value in before.items() if key != "state"} == {
        key: value for key, value in after.items() if key != "state"
    }


def nodes(node):
    yield node
    for child in node.get("children", []):
        yield from nodes(child)


def fault_points():
    """(module name, moment) for every place a fault can be injected; leaves only raise before their work."""
    points = []
    for name, module in FaultyModel().named_modules():
        if isinstance(module, Faulty):
            points.append((name, "before"))
            if not isinstance(module, Leaf):
                points.append((name, "after"))
    return points


@settings(derandomize=True, database=None, max_examples=60, deadline=None)
@given(
    point=st.sampled_from(fault_points()),
    fault_type=st.sampled_from([InjectedError, InjectedInterrupt, RuntimeError]),
    use_repr=st.booleans(),
    do_prune_layers=st.booleans(),
)
def test_a_raising_forward_leaves_the_model_untouched_and_a_partial_trace(
    point, fault_type, use_repr, do_prune_layers
):
    where, moment = point
    fault = fault_type(f"injected {moment} {where or 'the root'}")
    model = build_model(point, fault)
    before = snapshot(model)
    input_ids = torch.tensor([[1, 2, 3]])

    with tempfile.TemporaryDirectory() as scratch:
        debug_path = Path(scratch)
        try:
            with model_addition_debugger_context(
                model, debug_path=debug_path, use_repr=use_repr, do_prune_layers=do_prune_layers
            ):
                model(input_ids)
        except BaseException as raised:
            assert raised is fault  # the caller gets the model's own exception, unchanged
        else:
            raise AssertionError("the injected fault did not propagate")

        assert_same(before, snapshot(model))
        summary = json.loads((debug_path / "FaultyModel_debug_tree_SUMMARY.json").read_text())
        assert not [node for node in nodes(summary) if "exception" in node]  # upstream's keys only
        failed = [node for node in read_trace(debug_path).nodes if node.exception is not None]
        expected_path = f"FaultyModel.{where}" if where else "FaultyModel"
        assert [node.module_path for node in failed] == [expected_path]
        assert failed[0].exception == f"{fault_type.__name__}: {fault}"

        full = json.loads((debug_path / "FaultyModel_debug_tree_FULL_TENSORS.json").read_text())
        referenced = {
            value.removeprefix("./")
            for value in json.dumps(full).split('"')
            if value.startswith("./") and value.endswith(".safetensors")
        }
        on_disk = {path.name for path in debug_path.iterdir() if path.suffix == ".safetensors"}
        assert referenced == on_disk
        assert not [path for path in debug_path.iterdir() if path.name.startswith(".")]  # no temp files

    # the model still works, untraced, and gives what it gave before tracing
    for module in model.modules():
        if isinstance(module, Faulty):
            module.fault_at = None
    untraced = model(input_ids)
    assert untraced.shape == (1, 3, 4)


def test_a_model_left_untouched_works_like_before(caplog):
    """The restored model computes exactly what an untraced copy computes (also with grad)."""
    model = build_model(("layers.1", "after"), InjectedError("boom"))
    reference = build_model(None, None)
    caplog.set_level(logging.ERROR)
    with tempfile.TemporaryDirectory() as scratch:
        try:
            with model_addition_debugger_context(model, debug_path=scratch):
                model(torch.tensor([[1, 2]]))
        except InjectedError:
            pass
    for module in model.modules():
        if isinstance(module, Faulty):
            module.fault_at = None
    output = model(torch.tensor([[1, 2]]))
    assert output.requires_grad  # no_grad did not leak out of the context
    assert torch.equal(output, reference(torch.tensor([[1, 2]])))
