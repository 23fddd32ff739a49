"""The class patch registry, `apply_patches` on a toy package, and `patch_output_recorders`."""

from __future__ import annotations

import sys
import textwrap
import types

import pytest
import torch
from torch import nn

from model_debugging.monkey_patching import (
    apply_patches,
    clear_patch_mapping,
    get_patch_mapping,
    get_patch_namespaces,
    patch_output_recorders,
    register_patch_mapping,
    register_patch_namespace,
    unregister_patch_mapping,
    unregister_patch_namespace,
)
from model_debugging.output_capturing import OutputRecorder

TOY_MODELING = """
from torch import nn

class ToyMLP(nn.Module):
    def forward(self, x):
        return x + 1

class ToyAttention(nn.Module):
    def forward(self, x):
        return x, x

class ToyMLPConfig:
    pass

class ToyLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = ToyMLP()
        self.attn = ToyAttention()

    def forward(self, x):
        return self.mlp(self.attn(x)[0])
"""


class FastMLP(nn.Module):
    def forward(self, x):
        return x + 2


class SlowMLP(nn.Module):
    pass


class FusedAttention(nn.Module):
    def forward(self, x):
        return x, x * 0


@pytest.fixture(autouse=True)
def empty_registry():
    saved = get_patch_mapping()
    clear_patch_mapping()
    yield
    clear_patch_mapping()
    register_patch_mapping(saved)


@pytest.fixture
def toy_package():
    """A package `toy_models_ns` with a `modeling` submodule, loaded and registered for patching."""
    package = types.ModuleType("toy_models_ns")
    modeling = types.ModuleType("toy_models_ns.modeling")
    exec(textwrap.dedent(TOY_MODELING), modeling.__dict__)
    package.modeling = modeling
    sys.modules.update({"toy_models_ns": package, "toy_models_ns.modeling": modeling})
    register_patch_namespace("toy_models_ns")
    yield modeling
    unregister_patch_namespace("toy_models_ns")
    del sys.modules["toy_models_ns"], sys.modules["toy_models_ns.modeling"]


def test_get_patch_mapping_is_a_copy():
    register_patch_mapping({"ToyMLP": FastMLP})
    mapping = get_patch_mapping()
    mapping["Other"] = FastMLP
    assert get_patch_mapping() == {"ToyMLP": FastMLP}


@pytest.mark.parametrize("replacement", [FastMLP(), int, "FastMLP"])
def test_a_replacement_that_is_not_a_module_class_is_a_type_error(replacement):
    with pytest.raises(TypeError, match="replacement for 'ToyMLP' must be a subclass of nn.Module, got "):
        register_patch_mapping({"ToyMLP": replacement})


def test_registering_a_key_twice_needs_overwrite():
    register_patch_mapping({"ToyMLP": FastMLP})
    with pytest.raises(ValueError, match=r"already has \['ToyMLP'\]; pass overwrite=True"):
        register_patch_mapping({"ToyMLP": FusedAttention})
    register_patch_mapping({"ToyMLP": FusedAttention}, overwrite=True)
    assert get_patch_mapping() == {"ToyMLP": FusedAttention}


def test_an_invalid_regex_is_kept_as_an_exact_name_with_a_warning():
    with pytest.warns(
        UserWarning, match=r"key 'Toy\(MLP' is not a valid regular expression .* exact name only"
    ):
        register_patch_mapping({"ToyAttention": FusedAttention, "Toy(MLP": FastMLP})
    assert get_patch_mapping() == {"ToyAttention": FusedAttention, "Toy(MLP": FastMLP}


def test_unregister_removes_keys_and_rejects_unknown_ones():
    register_patch_mapping({"ToyMLP": FastMLP, "Attention$": FusedAttention})
    for expected in (KeyError, ValueError):
        with pytest.raises(expected, match=r"\['Missing'\] not found in monkey patch mapping cache"):
            unregister_patch_mapping(["Attention$", "Missing"])
    assert len(get_patch_mapping()) == 2
    unregister_patch_mapping("ToyMLP")
    assert get_patch_mapping() == {"Attention$": FusedAttention}
    clear_patch_mapping()
    assert get_patch_mapping() == {}


def test_apply_patches_swaps_while_building_and_restores_afterwards(toy_package):
    register_patch_mapping({"ToyMLP": FastMLP})
    original = toy_package.ToyMLP
    with apply_patches() as swapped:
        inside = toy_package.ToyLayer()
    outside = toy_package.ToyLayer()
    assert type(inside.mlp) is FastMLP and type(outside.mlp) is original
    assert toy_package.ToyMLP is original
    assert dict(swapped) == {"toy_models_ns.modeling.ToyMLP": (original, FastMLP)}


def test_exact_names_win_over_patterns_and_patterns_use_search(toy_package):
    config_class = toy_package.ToyMLPConfig
    register_patch_mapping({"MLP": FusedAttention, "ToyMLP": FastMLP, "Attention$": FusedAttention})
    with apply_patches():
        layer = toy_package.ToyLayer()
        # "MLP" matches the name of a class that is not a module, which stays
        assert toy_package.ToyMLPConfig is config_class
    assert type(layer.mlp) is FastMLP and type(layer.attn) is FusedAttention


def test_apply_patches_restores_on_error(toy_package):
    register_patch_mapping({"ToyMLP": FastMLP})
    original = toy_package.ToyMLP
    with pytest.raises(RuntimeError), apply_patches():
        assert toy_package.ToyMLP is FastMLP
        raise RuntimeError("while building")
    assert toy_package.ToyMLP is original


def test_nested_contexts_restore_what_each_found(toy_package):
    original_mlp, original_attention = toy_package.ToyMLP, toy_package.ToyAttention
    register_patch_mapping({"ToyMLP": FastMLP})
    with apply_patches():
        register_patch_mapping({"ToyAttention": FusedAttention})
        with apply_patches():
            assert (toy_package.ToyMLP, toy_package.ToyAttention) == (FastMLP, FusedAttention)
        assert (toy_package.ToyMLP, toy_package.ToyAttention) == (FastMLP, original_attention)
    assert (toy_package.ToyMLP, toy_package.ToyAttention) == (original_mlp, original_attention)


def test_blocks_closed_out_of_order_restore_the_originals(toy_package):
    original_mlp, original_attention = toy_package.ToyMLP, toy_package.ToyAttention
    register_patch_mapping({"ToyMLP": FastMLP})
    outer = apply_patches()
    outer.__enter__()
    register_patch_mapping({"ToyAttention": FusedAttention, "ToyMLP": SlowMLP}, overwrite=True)
    inner = apply_patches()
    inner.__enter__()
    assert (toy_package.ToyMLP, toy_package.ToyAttention) == (SlowMLP, FusedAttention)
    outer.__exit__(None, None, None)
    # the inner block is still open: its replacements stay
    assert (toy_package.ToyMLP, toy_package.ToyAttention) == (SlowMLP, FusedAttention)
    inner.__exit__(None, None, None)
    assert (toy_package.ToyMLP, toy_package.ToyAttention) == (original_mlp, original_attention)


def test_keys_match_the_attribute_name_not_the_class_name(toy_package):
    toy_package.AliasedMLP = toy_package.ToyMLP
    try:
        register_patch_mapping({"AliasedMLP": FastMLP})
        with apply_patches() as swapped:
            assert toy_package.AliasedMLP is FastMLP
            assert toy_package.ToyMLP is not FastMLP
        assert set(swapped) == {"toy_models_ns.modeling.AliasedMLP"}
        assert toy_package.AliasedMLP is toy_package.ToyMLP
    finally:
        del toy_package.AliasedMLP


def test_only_configured_namespaces_are_patched(toy_package):
    unregister_patch_namespace("toy_models_ns")
    try:
        register_patch_mapping({"ToyMLP": FastMLP})
        with apply_patches():
            assert type(toy_package.ToyLayer().mlp) is not FastMLP
        with apply_patches(namespaces=["toy_models_ns"]):
            assert type(toy_package.ToyLayer().mlp) is FastMLP
        assert "toy_models_ns" not in get_patch_namespaces()
    finally:
        register_patch_namespace("toy_models_ns")


def test_a_namespace_is_a_package_not_a_name_prefix(toy_package):
    lookalike = types.ModuleType("toy_models_ns_other")
    lookalike.ToyMLP = toy_package.ToyMLP
    sys.modules["toy_models_ns_other"] = lookalike
    try:
        register_patch_mapping({"ToyMLP": FastMLP})
        with apply_patches():
            assert lookalike.ToyMLP is not FastMLP
    finally:
        del sys.modules["toy_models_ns_other"]


@pytest.mark.parametrize("name", ["", "my pkg", "pkg.", 3])
def test_invalid_namespaces_are_rejected(name):
    with pytest.raises(ValueError, match="dotted module name"):
        register_patch_namespace(name)


def test_transformers_is_patched_by_default():
    assert get_patch_namespaces()[:2] == ("transformers", "transformers_modules")


def test_patch_output_recorders_points_the_instance_at_replacements(toy_package):
    class ToyModel(nn.Module):
        _can_record_outputs = {
            "hidden_states": [toy_package.ToyMLP],
            "attentions": OutputRecorder(toy_package.ToyAttention, index=1),
        }

        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(toy_package.ToyLayer() for _ in range(2))

    from model_debugging.output_capturing import BaseModelOutput, capture_outputs

    @capture_outputs
    def forward(self, x, **kwargs):
        for layer in self.layers:
            x = layer(x)
        return BaseModelOutput(last_hidden_state=x)

    ToyModel.forward = forward
    register_patch_mapping({"ToyMLP": FastMLP, "ToyAttention": FusedAttention})
    with apply_patches():
        model = ToyModel()
    before = model(torch.zeros(1), output_hidden_states=True, output_attentions=True)
    assert before.hidden_states == () and before.attentions == ()

    patch_output_recorders(model)
    after = model(torch.zeros(1), output_hidden_states=True, output_attentions=True)
    assert [h.item() for h in after.hidden_states] == [0.0, 2.0, 4.0]
    assert [a.item() for a in after.attentions] == [0.0, 0.0]
    assert model._can_record_outputs["attentions"] == OutputRecorder(FusedAttention, index=1)
    assert ToyModel._can_record_outputs["hidden_states"] == [toy_package.ToyMLP]
