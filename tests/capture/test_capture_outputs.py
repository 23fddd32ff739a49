"""`@capture_outputs` on toy decoders: what is collected, when, and in which form."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from model_debugging.capture.hooks import active_buffers
from model_debugging.output_capturing import (
    BaseModelOutput,
    OutputRecorder,
    capture_outputs,
    remove_capture_hooks,
)


def assert_tensors_equal(actual, expected):
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_hidden_states_match_a_manual_loop_and_end_with_last_hidden_state(toy):
    model = toy.Decoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True)
    manual = toy.manual_outputs(model, toy.input_ids)
    assert len(out.hidden_states) == model.config.num_hidden_layers + 1
    assert_tensors_equal(out.hidden_states, manual["hidden_states"])
    assert out.hidden_states[-1] is out.last_hidden_state
    assert out.attentions is None


def test_untied_hidden_states_end_with_the_last_layer_output(toy):
    class UntiedDecoder(toy.Decoder):
        forward = capture_outputs(toy.Decoder.forward.__wrapped__, tie_last_hidden_states=False)

    model = UntiedDecoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True)
    manual = toy.manual_outputs(model, toy.input_ids)
    torch.testing.assert_close(out.hidden_states[-1], manual["layer_outputs"][-1], rtol=0, atol=0)
    # the config overrides the decorator's default
    model.config.tie_last_hidden_states = True
    tied = model(toy.input_ids, output_hidden_states=True)
    assert tied.hidden_states[-1] is tied.last_hidden_state


def test_a_plain_attention_class_records_its_second_output(toy):
    class PlainDecoder(toy.Decoder):
        _can_record_outputs = {"attentions": toy.Attention}

    model = PlainDecoder(toy.config())
    out = model(toy.input_ids, output_attentions=True)
    assert_tensors_equal(out.attentions, toy.manual_outputs(model, toy.input_ids)["attentions"])
    assert out.attentions[0].shape == (2, 5, 5)
    assert out.hidden_states is None


def test_nothing_requested_installs_no_hooks_and_leaves_fields_empty(toy):
    model = toy.Decoder(toy.config())
    out = model(toy.input_ids)
    assert out.hidden_states is None and out.attentions is None
    assert sum(toy.recording_hooks(module) for module in model.modules()) == 0


def test_flags_come_from_kwargs_before_config(toy):
    model = toy.Decoder(toy.config(output_hidden_states=True, output_attentions=False))
    from_config = model(toy.input_ids)
    assert len(from_config.hidden_states) == 4 and from_config.attentions is None
    overridden = model(toy.input_ids, output_hidden_states=False, output_attentions=True)
    assert overridden.hidden_states is None and len(overridden.attentions) == 3
    explicit_none = model(toy.input_ids, output_hidden_states=None)
    assert len(explicit_none.hidden_states) == 4


def test_return_dict_false_returns_the_tuple_without_empty_fields(toy):
    model = toy.Decoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True, return_dict=False)
    assert isinstance(out, tuple) and len(out) == 2
    last_hidden_state, hidden_states = out
    assert hidden_states[-1] is last_hidden_state

    model.config.return_dict = False
    assert isinstance(model(toy.input_ids), tuple)
    assert not isinstance(model(toy.input_ids, return_dict=True), tuple)


def test_return_dict_is_not_passed_to_the_forward(toy):
    seen = {}

    class Recording(toy.Decoder):
        @capture_outputs
        def forward(self, input_ids, **kwargs):
            seen.update(kwargs)
            return toy.ToyOutput(last_hidden_state=self.embed(input_ids))

    Recording(toy.config())(toy.input_ids, return_dict=False, output_attentions=True)
    assert seen == {"output_attentions": True}


def test_cross_attentions_use_layer_name_and_follow_output_attentions(toy):
    model = toy.CrossDecoder(toy.config(cross=True))
    encoder_hidden = torch.randn(2, 4, 8)
    out = model(toy.input_ids, encoder_hidden, output_attentions=True)
    manual = toy.manual_outputs(model, toy.input_ids, encoder_hidden)
    assert_tensors_equal(out.attentions, manual["attentions"])
    assert_tensors_equal(out.cross_attentions, manual["cross_attentions"])
    assert out.cross_attentions[0].shape == (2, 5, 4)

    only_self = model(toy.input_ids, encoder_hidden, output_attentions=True, output_cross_attentions=False)
    assert len(only_self.attentions) == 3 and only_self.cross_attentions is None


def test_a_list_of_recorders_collects_from_each_in_call_order(toy):
    class BothDecoder(toy.Decoder):
        _can_record_outputs = {
            "attentions": [
                OutputRecorder(toy.Attention, layer_name="self_attn"),
                OutputRecorder(toy.Attention, layer_name="crossattention"),
            ]
        }

    model = BothDecoder(toy.config(cross=True))
    encoder_hidden = torch.randn(2, 4, 8)
    out = model(toy.input_ids, encoder_hidden, output_attentions=True)
    assert [weights.shape[-1] for weights in out.attentions] == [5, 4] * 3


def test_a_class_name_string_selects_modules_by_class_name(toy):
    class NamedDecoder(toy.Decoder):
        _can_record_outputs = {"hidden_states": "Block"}

    model = NamedDecoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True)
    assert_tensors_equal(out.hidden_states, toy.manual_outputs(model, toy.input_ids)["hidden_states"])


def test_hooks_are_installed_once_and_only_on_matching_modules(toy):
    model = toy.CrossDecoder(toy.config(cross=True))
    encoder_hidden = torch.randn(2, 4, 8)
    for _ in range(3):
        model(toy.input_ids, encoder_hidden, output_attentions=True, output_hidden_states=True)
    hooked = {name for name, module in model.named_modules() if toy.recording_hooks(module)}
    expected = {f"layers.{i}{suffix}" for i in range(3) for suffix in ("", ".self_attn", ".crossattention")}
    assert hooked == expected
    assert all(toy.recording_hooks(model.get_submodule(name)) == 1 for name in hooked)


def test_remove_capture_hooks_removes_them_and_capture_reinstalls(toy):
    model = toy.Decoder(toy.config())
    model(toy.input_ids, output_hidden_states=True)
    remove_capture_hooks(model)
    assert sum(toy.recording_hooks(module) for module in model.modules()) == 0
    assert len(model(toy.input_ids, output_hidden_states=True).hidden_states) == 4


class Encoder(nn.Module):
    """A sub-model with its own declaration and decorated forward."""

    def __init__(self, block_class, declaration):
        super().__init__()
        self._can_record_outputs = declaration
        self.layers = nn.ModuleList(block_class(8, False) for _ in range(2))

    @capture_outputs
    def forward(self, hidden, **kwargs):
        for layer in self.layers:
            hidden = layer(hidden)
        return BaseModelOutput(last_hidden_state=hidden)


def test_a_nested_sub_model_records_with_its_own_declaration(toy):
    class EncoderDecoder(toy.Decoder):
        def __init__(self, config):
            super().__init__(config)
            self.encoder = Encoder(toy.Block, {"hidden_states": toy.Block})

        @capture_outputs
        def forward(self, input_ids, **kwargs):
            encoded = self.encoder(self.embed(input_ids), **kwargs)
            hidden = encoded.last_hidden_state
            for layer in self.layers:
                hidden = layer(hidden)
            return toy.ToyOutput(last_hidden_state=self.norm(hidden), attentions=encoded.hidden_states)

    model = EncoderDecoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True)
    # the encoder's two blocks feed the encoder's own output, not the outer hidden states
    assert len(out.hidden_states) == 4
    assert len(out.attentions) == 3
    assert all(toy.recording_hooks(layer) == 1 for layer in model.encoder.layers)
    assert model(toy.input_ids).hidden_states is None


def test_an_empty_declaration_shields_a_sub_model_from_the_outer_recorders(toy):
    class Outer(toy.Decoder):
        def __init__(self, config):
            super().__init__(config)
            self.encoder = Encoder(toy.Block, {})

    model = Outer(toy.config())
    model(toy.input_ids, output_hidden_states=True)
    assert all(toy.recording_hooks(layer) == 0 for layer in model.encoder.layers)
    assert all(toy.recording_hooks(layer) == 1 for layer in model.layers)


def test_a_layer_called_with_keywords_only_still_gives_the_initial_hidden_state(toy):
    class KeywordDecoder(toy.Decoder):
        @capture_outputs
        def forward(self, input_ids, **kwargs):
            hidden = self.embed(input_ids)
            for layer in self.layers:
                hidden = layer(hidden=hidden)
            return toy.ToyOutput(last_hidden_state=hidden)

    model = KeywordDecoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True)
    torch.testing.assert_close(out.hidden_states[0], model.embed(toy.input_ids))


def test_a_forward_returning_a_tuple_is_a_clear_error(toy):
    class TupleDecoder(toy.Decoder):
        @capture_outputs
        def forward(self, input_ids, **kwargs):
            return (self.embed(input_ids),)

    with pytest.raises(TypeError, match="TupleDecoder.forward .* must return a ModelOutput-like object"):
        TupleDecoder(toy.config())(toy.input_ids, output_hidden_states=True)


def test_an_index_outside_the_output_names_the_module(toy):
    class WrongIndex(toy.Decoder):
        _can_record_outputs = {"attentions": OutputRecorder(toy.Attention, index=5)}

    with pytest.raises(IndexError, match=r"layers\.0\.self_attn \(Attention\).*2 items.*index 5"):
        WrongIndex(toy.config())(toy.input_ids, output_attentions=True)


def test_a_failing_forward_leaves_no_active_capture(toy):
    class Failing(toy.Decoder):
        @capture_outputs
        def forward(self, input_ids, **kwargs):
            self.layers[0](self.embed(input_ids))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        Failing(toy.config())(toy.input_ids, output_hidden_states=True)
    assert active_buffers.get() is None


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({}, ValueError, "target_class or a class_name"),
        ({"target_class": int}, TypeError, "must be a subclass of nn.Module"),
        ({"target_class": nn.Linear, "index": "1"}, TypeError, "index must be an int"),
        ({"target_class": nn.Linear, "layer_name": "."}, ValueError, "layer_name"),
    ],
)
def test_invalid_recorders_are_rejected(arguments, error, message):
    with pytest.raises(error, match=message):
        OutputRecorder(**arguments)


def test_an_invalid_declaration_names_the_model_and_field(toy):
    class BadDecoder(toy.Decoder):
        _can_record_outputs = {"attentions": 3}

    with pytest.raises(TypeError, match=r"BadDecoder._can_record_outputs\['attentions'\]"):
        BadDecoder(toy.config())(toy.input_ids, output_attentions=True)


def test_a_deep_copy_of_a_hooked_model_captures_its_own_outputs_once(toy):
    model = toy.Decoder(toy.config())
    model(toy.input_ids, output_hidden_states=True)
    clone = copy.deepcopy(model)
    with torch.no_grad():
        for layer in clone.layers:
            layer.mlp[0].weight.mul_(2)
    out = clone(toy.input_ids, output_hidden_states=True)
    assert all(toy.recording_hooks(layer) == 1 for layer in clone.layers)
    assert_tensors_equal(out.hidden_states, toy.manual_outputs(clone, toy.input_ids)["hidden_states"])


def test_a_module_registered_under_two_names_records_once_per_call(toy):
    class SharedDecoder(toy.Decoder):
        def __init__(self, config):
            super().__init__(config)
            self.first_layer = self.layers[0]  # same instance, second name

    model = SharedDecoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True)
    assert len(out.hidden_states) == 4
