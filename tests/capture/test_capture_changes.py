"""`@capture_outputs` follows the model as it is at each call, and what transformers users also rely on."""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import pytest
import torch

from model_debugging.output_capturing import ModelOutput, OutputRecorder, capture_outputs


def test_layers_appended_after_the_first_capture_are_recorded(toy):
    model = toy.Decoder(toy.config())
    assert len(model(toy.input_ids, output_hidden_states=True).hidden_states) == 4
    model.layers.append(toy.Block(8, cross=False))
    model.layers.append(toy.Block(8, cross=False))
    out = model(toy.input_ids, output_hidden_states=True, output_attentions=True)
    assert len(out.hidden_states) == 6 and len(out.attentions) == 5
    torch.testing.assert_close(
        out.hidden_states, tuple(toy.manual_outputs(model, toy.input_ids)["hidden_states"])
    )


def test_a_replaced_layer_is_recorded_and_the_removed_one_no_longer_is(toy):
    model = toy.Decoder(toy.config())
    model(toy.input_ids, output_hidden_states=True)
    removed = model.layers[1]
    model.layers[1] = toy.Block(8, cross=False)
    out = model(toy.input_ids, output_hidden_states=True)
    torch.testing.assert_close(
        out.hidden_states, tuple(toy.manual_outputs(model, toy.input_ids)["hidden_states"])
    )
    assert toy.recording_hooks(model.layers[1]) == 1
    assert toy.recording_hooks(removed) == 0


def test_a_recorder_reassigned_after_a_capture_is_followed(toy):
    class OtherBlock(toy.Block):
        pass

    class Reassigned(toy.Decoder):
        _can_record_outputs = {"hidden_states": OutputRecorder(OtherBlock, index=0)}

    model = Reassigned(toy.config())
    assert model(toy.input_ids, output_hidden_states=True).hidden_states == ()
    model._can_record_outputs["hidden_states"].target_class = toy.Block
    assert len(model(toy.input_ids, output_hidden_states=True).hidden_states) == 4


def test_an_invalid_assignment_to_a_recorder_is_refused_and_changes_nothing(toy):
    recorder = OutputRecorder(toy.Attention, index=1)
    with pytest.raises(TypeError, match="target_class must be a subclass of nn.Module, got <class 'int'>"):
        recorder.target_class = int
    assert recorder.target_class is toy.Attention


def test_a_class_name_string_matches_the_class_or_the_end_of_the_module_path(toy):
    class ByName(toy.Decoder):
        _can_record_outputs = {
            "hidden_states": "Block",
            "attentions": OutputRecorder(class_name="self_attn", index=1),
        }

    model = ByName(toy.config())
    out = model(toy.input_ids, output_hidden_states=True, output_attentions=True)
    manual = toy.manual_outputs(model, toy.input_ids)
    torch.testing.assert_close(out.hidden_states, tuple(manual["hidden_states"]))
    torch.testing.assert_close(out.attentions, tuple(manual["attentions"]))


def test_a_list_of_two_attention_recorders_collects_both_under_attentions(toy):
    class Both(toy.Decoder):
        _can_record_outputs = {
            "attentions": [
                OutputRecorder(toy.Attention, layer_name="self_attn"),
                OutputRecorder(toy.Attention, layer_name="crossattention"),
            ]
        }

    model = Both(toy.config(cross=True))
    out = model(toy.input_ids, encoder_hidden=torch.randn(2, 4, 8), output_attentions=True)
    assert len(out.attentions) == 6 and out.cross_attentions is None


@dataclass
class SegmentationOutput(ModelOutput):
    last_hidden_state: torch.Tensor | None = None
    mask_decoder_attentions: tuple[torch.Tensor, ...] | None = None


def test_mask_decoder_attentions_follow_output_attentions(toy):
    class MaskDecoder(toy.Decoder):
        _can_record_outputs = {"mask_decoder_attentions": OutputRecorder(toy.Attention, index=1)}

        @capture_outputs
        def forward(self, input_ids, **kwargs):
            hidden = self.embed(input_ids)
            for layer in self.layers:
                hidden = layer(hidden)
            return SegmentationOutput(last_hidden_state=hidden)

    model = MaskDecoder(toy.config())
    assert len(model(toy.input_ids, output_attentions=True).mask_decoder_attentions) == 3
    assert model(toy.input_ids, output_attentions=True, output_mask_decoder_attentions=False).keys() == [
        "last_hidden_state"
    ]


@dataclass
class VisionOutput(ModelOutput):
    last_hidden_state: torch.Tensor | None = None
    vision_hidden_states: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None


def test_the_last_hidden_state_is_tied_to_vision_hidden_states_when_set(toy):
    marker = torch.full((2, 5, 8), 7.0)

    class Vision(toy.Decoder):
        @capture_outputs
        def forward(self, input_ids, set_vision=True, **kwargs):
            hidden = self.embed(input_ids)
            for layer in self.layers:
                hidden = layer(hidden)
            return VisionOutput(
                last_hidden_state=self.norm(hidden), vision_hidden_states=marker if set_vision else None
            )

    model = Vision(toy.config())
    assert model(toy.input_ids, output_hidden_states=True).hidden_states[-1] is marker
    out = model(toy.input_ids, set_vision=False, output_hidden_states=True)
    assert out.hidden_states[-1] is out.last_hidden_state


@pytest.mark.parametrize(
    ("selection", "positions"), [([0, -1], [0, 3]), (2, [2]), ([-1, 1, 1], [1, 3]), ((), []), (0, [0])]
)
def test_output_hidden_states_selects_layers_by_index(toy, selection, positions):
    model = toy.Decoder(toy.config())
    everything = model(toy.input_ids, output_hidden_states=True).hidden_states
    selected = model(toy.input_ids, output_hidden_states=selection).hidden_states
    torch.testing.assert_close(selected, tuple(everything[p] for p in positions))


def test_hidden_state_indices_out_of_range_are_left_out_with_one_warning(toy):
    class FarIndices(toy.Decoder):
        pass

    model = FarIndices(toy.config())
    with pytest.warns(UserWarning, match=r"selects \[9\], outside the 4 hidden states"):
        assert len(model(toy.input_ids, output_hidden_states=[0, 9]).hidden_states) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model(toy.input_ids, output_hidden_states=[0, 9])


def test_asking_for_an_undeclared_output_warns_once(toy):
    class NoAttentions(toy.Decoder):
        _can_record_outputs = {"hidden_states": toy.Block}

    model = NoAttentions(toy.config())
    with pytest.warns(
        UserWarning, match=r"asked for output_attentions=True but .* declares \['hidden_states'\]"
    ):
        assert model(toy.input_ids, output_attentions=True).attentions is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model(toy.input_ids, output_attentions=True)
        model(toy.input_ids, output_hidden_states=True, output_attentions=False)


def test_the_initial_hidden_state_can_be_left_out(toy):
    class LayersOnly(toy.Decoder):
        _can_record_outputs = {"hidden_states": OutputRecorder(toy.Block, capture_initial_hidden_state=False)}

    model = LayersOnly(toy.config())
    out = model(toy.input_ids, output_hidden_states=True)
    torch.testing.assert_close(
        out.hidden_states, tuple(toy.manual_outputs(model, toy.input_ids)["hidden_states"][1:])
    )


def test_a_deep_copy_of_a_captured_model_records_each_layer_once(toy):
    model = toy.Decoder(toy.config())
    model(toy.input_ids, output_hidden_states=True)
    clone = copy.deepcopy(model)
    assert len(clone(toy.input_ids, output_hidden_states=True).hidden_states) == 4
    assert len(model(toy.input_ids, output_hidden_states=True).hidden_states) == 4


def test_layers_replaced_again_and_again_are_each_recorded(toy):
    model = toy.Decoder(toy.config())
    for _ in range(5):  # the replaced layer is freed each time, so a new one may reuse its id
        model(toy.input_ids, output_hidden_states=True)
        model.layers[2] = toy.Block(8, cross=False)
        out = model(toy.input_ids, output_hidden_states=True)
        expected = toy.manual_outputs(model, toy.input_ids)["hidden_states"]
        torch.testing.assert_close(out.hidden_states, tuple(expected))


def test_a_declaration_set_on_the_instance_after_a_capture_is_followed(toy):
    model = toy.Decoder(toy.config())
    assert len(model(toy.input_ids, output_attentions=True).attentions) == 3
    model._can_record_outputs = {"attentions": OutputRecorder(toy.Attention, layer_name="layers.0.self_attn")}
    assert len(model(toy.input_ids, output_attentions=True).attentions) == 1
