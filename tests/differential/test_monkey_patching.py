"""The class patch registry and `apply_patches`, run through transformers' module and ours.

Covers, in our own words, each case of transformers' tests/test_monkey_patching.py (2026-03-30),
plus real modeling modules and the differences docs/capture.md lists.
"""

from __future__ import annotations

import sys
import threading
import types
from contextlib import contextmanager

import pytest
from torch import nn

from tests.differential.implementations import BOTH, OURS, UPSTREAM, run_both

pytestmark = pytest.mark.integration


class Replacement(nn.Module):
    pass


class OtherReplacement(nn.Module):
    pass


@contextmanager
def fake_transformers_module(name: str, **attributes):
    """A module under the transformers namespace, which both implementations patch."""
    module = types.ModuleType(f"transformers.{name}")
    vars(module).update(attributes)
    sys.modules[module.__name__] = module
    try:
        yield module
    finally:
        del sys.modules[module.__name__]


def test_a_registered_mapping_is_listed():
    def scenario(impl):
        impl.patching.register_patch_mapping(mapping={"SomeModule": Replacement})
        return impl.patching.get_patch_mapping()

    assert run_both(scenario) == ({"SomeModule": Replacement},) * 2


def test_registering_a_key_again_needs_overwrite():
    def scenario(impl):
        impl.patching.register_patch_mapping(mapping={"SomeModule": Replacement})
        with pytest.raises(ValueError, match="overwrite=True") as refused:
            impl.patching.register_patch_mapping(mapping={"SomeModule": OtherReplacement})
        kept = impl.patching.get_patch_mapping()["SomeModule"]
        impl.patching.register_patch_mapping(mapping={"SomeModule": OtherReplacement}, overwrite=True)
        return type(refused.value), kept, impl.patching.get_patch_mapping()["SomeModule"]

    assert run_both(scenario) == ((ValueError, Replacement, OtherReplacement),) * 2


@pytest.mark.parametrize("replacement", [int, "Replacement", Replacement()])
def test_a_replacement_that_is_not_a_module_class_is_a_type_error(replacement):
    def scenario(impl):
        with pytest.raises(TypeError) as refused:
            impl.patching.register_patch_mapping(mapping={"SomeModule": replacement})
        return impl.patching.get_patch_mapping(), "must be a" in str(refused.value)

    assert run_both(scenario) == (({}, True),) * 2
    if isinstance(replacement, type):
        with pytest.raises(TypeError, match="must be a subclass of nn.Module"):
            OURS.patching.register_patch_mapping(mapping={"SomeModule": replacement})


def test_unregistering_removes_the_key():
    def scenario(impl):
        impl.patching.register_patch_mapping(mapping={"SomeModule": Replacement, "Other": Replacement})
        impl.patching.unregister_patch_mapping(["SomeModule"])
        return impl.patching.get_patch_mapping()

    assert run_both(scenario) == ({"Other": Replacement},) * 2


def test_unregistering_an_unknown_key_is_a_value_error_with_the_same_words():
    def scenario(impl):
        with pytest.raises(ValueError, match="not found in monkey patch mapping cache") as refused:
            impl.patching.unregister_patch_mapping(["NeverRegistered"])
        return isinstance(refused.value, ValueError), "Cannot unregister" in str(refused.value)

    assert run_both(scenario) == ((True, True),) * 2
    with pytest.raises(KeyError):  # what earlier releases of this package raised
        OURS.patching.unregister_patch_mapping(["NeverRegistered"])


def test_clearing_empties_the_registry():
    def scenario(impl):
        impl.patching.register_patch_mapping(mapping={"A": Replacement, "B": OtherReplacement})
        impl.patching.clear_patch_mapping()
        return impl.patching.get_patch_mapping()

    assert run_both(scenario) == ({}, {})


def test_the_listed_mapping_is_a_copy():
    def scenario(impl):
        impl.patching.register_patch_mapping(mapping={"A": Replacement})
        impl.patching.get_patch_mapping()["B"] = Replacement
        return impl.patching.get_patch_mapping()

    assert run_both(scenario) == ({"A": Replacement},) * 2


def test_reading_while_another_thread_registers():
    def scenario(impl):
        sizes = []

        def read():
            sizes.extend(len(impl.patching.get_patch_mapping()) for _ in range(100))

        def write():
            for index in range(100):
                impl.patching.register_patch_mapping(mapping={f"Module{index}": Replacement})

        threads = [threading.Thread(target=read), threading.Thread(target=write)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return len(sizes), sizes == sorted(sizes), len(impl.patching.get_patch_mapping())

    assert run_both(scenario) == ((100, True, 100),) * 2


def _recorder_model(declared):
    class WithRecorders(nn.Module):
        _can_record_outputs = declared

    return WithRecorders()


def test_patch_output_recorders_retargets_a_recorder():
    class OriginalAttention(nn.Module):
        pass

    def scenario(impl):
        model = _recorder_model({"attentions": impl.capturing.OutputRecorder(OriginalAttention, index=1)})
        impl.patching.register_patch_mapping(mapping={"OriginalAttention": Replacement})
        impl.patching.patch_output_recorders(model)
        recorder = model._can_record_outputs["attentions"]
        return recorder.target_class, recorder.index

    assert run_both(scenario) == ((Replacement, 1),) * 2


def test_patch_output_recorders_replaces_a_plain_class_and_a_class_in_a_list():
    class OriginalLayer(nn.Module):
        pass

    def scenario(impl):
        model = _recorder_model(
            {"hidden_states": OriginalLayer, "attentions": [OriginalLayer, OtherReplacement]}
        )
        impl.patching.register_patch_mapping(mapping={"OriginalLayer": Replacement})
        impl.patching.patch_output_recorders(model)
        return dict(model._can_record_outputs)

    assert (
        run_both(scenario)
        == ({"hidden_states": Replacement, "attentions": [Replacement, OtherReplacement]},) * 2
    )


def test_a_pattern_retargets_recorders():
    class OriginalAttention(nn.Module):
        pass

    def scenario(impl):
        model = _recorder_model({"attentions": impl.capturing.OutputRecorder(OriginalAttention)})
        impl.patching.register_patch_mapping(mapping={".*Attention": Replacement})
        impl.patching.patch_output_recorders(model)
        return model._can_record_outputs["attentions"].target_class

    assert run_both(scenario) == (Replacement, Replacement)


def test_which_attributes_a_block_swaps_and_restores():
    """Patterns search attribute names, an exact key wins over a pattern, an alias counts under its own name.

    The names are unique to this test: transformers' apply_patches searches every loaded transformers module.
    """
    attributes = {
        "DiffBertAttention": nn.Module,
        "DiffGPT2Attention": nn.Module,
        "DiffT5Attention": nn.Module,
        "DiffOther": nn.Module,
        "DiffDense": nn.Linear,  # an alias of nn.Linear
        "DiffLinear": nn.Linear,
    }

    def scenario(impl):
        with fake_transformers_module("differential_swaps", **attributes) as module:
            impl.patching.register_patch_mapping(
                mapping={"^Diff.*Attention$": OtherReplacement, "DiffDense": Replacement}
            )
            impl.patching.register_patch_mapping(mapping={"DiffBertAttention": Replacement})
            with impl.patching.apply_patches():
                inside = {name: getattr(module, name) for name in attributes}
            return inside, {name: getattr(module, name) for name in attributes}

    swapped = {
        "DiffBertAttention": Replacement,
        "DiffGPT2Attention": OtherReplacement,
        "DiffT5Attention": OtherReplacement,
        "DiffOther": nn.Module,
        "DiffDense": Replacement,
        "DiffLinear": nn.Linear,
    }
    assert run_both(scenario) == ((swapped, attributes),) * 2


def test_a_real_model_built_inside_the_block_uses_the_replacement():
    from transformers import LlamaConfig, LlamaModel
    from transformers.models.llama import modeling_llama

    class PlainMLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.projection = nn.Linear(config.hidden_size, config.hidden_size)

        def forward(self, hidden_states):
            return self.projection(hidden_states)

    config = LlamaConfig(
        hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2, vocab_size=32
    )

    def scenario(impl):
        impl.patching.register_patch_mapping(mapping={"LlamaMLP": PlainMLP})
        with impl.patching.apply_patches():
            inside = LlamaModel(config)
        outside = LlamaModel(config)
        return type(inside.layers[1].mlp), type(outside.layers[1].mlp), modeling_llama.LlamaMLP.__name__

    assert run_both(scenario) == ((PlainMLP, modeling_llama.LlamaMLP, "LlamaMLP"),) * 2


def test_an_invalid_regex_key_is_accepted_as_an_exact_name():
    def scenario(impl):
        impl.patching.register_patch_mapping(mapping={"Attention(": Replacement})
        return impl.patching.get_patch_mapping()

    with pytest.warns(UserWarning, match="not a valid regular expression"):
        results = run_both(scenario)
    assert results == ({"Attention(": Replacement},) * 2
    with (
        fake_transformers_module("differential_regex", DiffAttention=nn.Module) as module,
        OURS.patching.apply_patches(),
    ):
        assert module.DiffAttention is nn.Module


def test_blocks_closed_out_of_order_restore_the_original_only_here():
    """A documented difference: transformers leaves the inner block's swap in place for good."""

    def scenario(impl):
        with fake_transformers_module("differential_order", DiffOrderLinear=nn.Linear) as module:
            impl.patching.register_patch_mapping(mapping={"DiffOrderLinear": Replacement})
            outer = impl.patching.apply_patches()
            outer.__enter__()
            impl.patching.register_patch_mapping(
                mapping={"DiffOrderLinear": OtherReplacement}, overwrite=True
            )
            inner = impl.patching.apply_patches()
            inner.__enter__()
            outer.__exit__(None, None, None)
            inner.__exit__(None, None, None)
            return module.DiffOrderLinear

    theirs, ours = run_both(scenario)
    assert ours is nn.Linear
    assert theirs is Replacement


@pytest.mark.parametrize("implementation", BOTH)
def test_a_block_that_raises_is_restored_only_here(implementation):
    """A documented difference: transformers restores nothing when the block raises."""
    with fake_transformers_module("differential_raise", DiffRaiseLinear=nn.Linear) as module:
        implementation.patching.register_patch_mapping(mapping={"DiffRaiseLinear": Replacement})
        with pytest.raises(RuntimeError), implementation.patching.apply_patches():
            raise RuntimeError("model construction failed")
        expected = Replacement if implementation is UPSTREAM else nn.Linear
        assert module.DiffRaiseLinear is expected
