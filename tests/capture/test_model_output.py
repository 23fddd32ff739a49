"""The package's ModelOutput base, and capture into transformers' own ModelOutput."""

from __future__ import annotations

import pytest
import torch

from model_debugging.output_capturing import BaseModelOutputWithPast, capture_outputs


def test_attribute_key_and_index_access_agree():
    last, cache = torch.ones(1), ("cache",)
    out = BaseModelOutputWithPast(last_hidden_state=last, past_key_values=cache)
    assert out["last_hidden_state"] is out.last_hidden_state is out[0] is last
    assert out[1] is cache and out[:2] == (last, cache)
    assert list(out) == out.keys() == ["last_hidden_state", "past_key_values"]
    assert "hidden_states" not in out and len(out) == 2
    assert out.get("hidden_states", "absent") == "absent"
    assert dict(out.items()) == {"last_hidden_state": last, "past_key_values": cache}


def test_to_tuple_skips_fields_left_as_none():
    last, attentions = torch.ones(1), (torch.zeros(1),)
    out = BaseModelOutputWithPast(last_hidden_state=last, attentions=attentions)
    assert out.to_tuple() == (last, attentions)


def test_unset_and_unknown_keys_are_key_errors_naming_the_field():
    out = BaseModelOutputWithPast(last_hidden_state=torch.ones(1))
    with pytest.raises(KeyError, match="no field 'hidden_states' set"):
        out["hidden_states"]
    with pytest.raises(KeyError, match="no field 'logits'; its fields are"):
        out["logits"] = torch.ones(1)
    out["hidden_states"] = (torch.ones(1),)
    assert out.hidden_states == out["hidden_states"]


def test_capture_fills_a_transformers_model_output(toy):
    modeling_outputs = pytest.importorskip("transformers.modeling_outputs")

    class TransformersOutputDecoder(toy.Decoder):
        @capture_outputs
        def forward(self, input_ids, **kwargs):
            hidden = self.embed(input_ids)
            for layer in self.layers:
                hidden = layer(hidden)
            return modeling_outputs.BaseModelOutput(last_hidden_state=self.norm(hidden))

    model = TransformersOutputDecoder(toy.config())
    out = model(toy.input_ids, output_hidden_states=True, output_attentions=True)
    assert isinstance(out, modeling_outputs.BaseModelOutput)
    assert len(out["hidden_states"]) == 4 and len(out.attentions) == 3
    expected = toy.manual_outputs(model, toy.input_ids)["hidden_states"]
    for got, want in zip(out.hidden_states, expected, strict=True):
        torch.testing.assert_close(got, want)
    as_tuple = model(toy.input_ids, output_attentions=True, return_dict=False)
    assert len(as_tuple) == 2 and len(as_tuple[1]) == 3
