"""`capture_outputs` and `OutputRecorder` on one toy decoder, decorated by transformers' module and by ours."""

from __future__ import annotations

import pytest
import torch

from tests.differential.implementations import OURS, UPSTREAM, run_both
from tests.differential.toys import Attention, Block, toy_decoder, toy_inputs

pytestmark = pytest.mark.integration

FIELDS = ("last_hidden_state", "hidden_states", "attentions", "cross_attentions", "mask_decoder_attentions")


def observed(output) -> dict:
    """What a caller sees: each set field, tuples as lists."""
    return {name: getattr(output, name) for name in FIELDS if getattr(output, name, None) is not None}


def assert_same(theirs, ours):
    assert theirs.keys() == ours.keys()
    for name in theirs:
        torch.testing.assert_close(ours[name], theirs[name], rtol=0, atol=0, msg=name)


def capture(declaration, *, tie: bool = True, vision_marker=False, config=None, **flags):
    def scenario(impl):
        model = toy_decoder(impl, declaration(impl), tie=tie, vision_marker=vision_marker, **(config or {}))
        return observed(model(**toy_inputs(), **flags))

    return run_both(scenario)


def by_class(impl):
    return {
        "hidden_states": Block,
        "attentions": impl.capturing.OutputRecorder(Attention, index=1, layer_name="self_attn"),
    }


def test_hidden_states_and_attentions_from_classes_and_recorders():
    theirs, ours = capture(by_class, output_hidden_states=True, output_attentions=True)
    assert_same(theirs, ours)
    assert len(ours["hidden_states"]) == 4 and len(ours["attentions"]) == 3


def test_flags_from_the_config():
    theirs, ours = capture(by_class, config={"output_hidden_states": True, "output_attentions": False})
    assert_same(theirs, ours)
    assert "hidden_states" in ours and "attentions" not in ours


def test_nothing_requested_records_nothing():
    assert_same(*capture(by_class))


def test_untied_hidden_states_end_with_the_last_layer_output():
    theirs, ours = capture(by_class, tie=False, output_hidden_states=True)
    assert_same(theirs, ours)
    assert not torch.equal(ours["hidden_states"][-1], ours["last_hidden_state"])


def test_the_last_hidden_state_is_tied_to_vision_hidden_states():
    marker = torch.full((2, 5, 8), 3.0)
    theirs, ours = capture(by_class, vision_marker=marker, output_hidden_states=True)
    assert_same(theirs, ours)
    assert ours["hidden_states"][-1] is marker


def test_an_unset_vision_hidden_states_field_leaves_the_last_hidden_state_only_here():
    """A documented difference: transformers puts the unset field (None) in the last place."""
    theirs, ours = capture(by_class, vision_marker=None, output_hidden_states=True)
    assert theirs["hidden_states"][-1] is None
    assert ours["hidden_states"][-1] is ours["last_hidden_state"]


def test_cross_attentions_follow_output_attentions():
    def declaration(impl):
        recorder = impl.capturing.OutputRecorder
        return {
            "attentions": recorder(Attention, index=1, layer_name="self_attn"),
            "cross_attentions": recorder(Attention, index=1, layer_name="crossattention"),
        }

    theirs, ours = capture(declaration, output_attentions=True)
    assert_same(theirs, ours)
    assert len(ours["cross_attentions"]) == 3


def test_mask_decoder_attentions_follow_output_attentions():
    def declaration(impl):
        return {
            "mask_decoder_attentions": impl.capturing.OutputRecorder(
                Attention, index=1, layer_name="crossattention"
            )
        }

    theirs, ours = capture(declaration, output_attentions=True)
    assert_same(theirs, ours)
    assert len(ours["mask_decoder_attentions"]) == 3


def test_a_list_of_two_recorders_under_attentions_stays_in_attentions():
    """transformers 5.x collects both in order (the 2026-03-30 snapshot split them into cross_attentions)."""

    def declaration(impl):
        recorder = impl.capturing.OutputRecorder
        return {
            "attentions": [
                recorder(Attention, index=1, layer_name="self_attn"),
                recorder(Attention, index=1, layer_name="crossattention"),
            ]
        }

    theirs, ours = capture(declaration, output_attentions=True)
    assert_same(theirs, ours)
    assert len(ours["attentions"]) == 6 and "cross_attentions" not in ours


def test_a_string_naming_the_end_of_a_module_path():
    def declaration(impl):
        return {
            "attentions": impl.capturing.OutputRecorder(target_class=None, index=1, class_name="self_attn")
        }

    theirs, ours = capture(declaration, output_attentions=True)
    assert_same(theirs, ours)
    assert len(ours["attentions"]) == 3


def test_a_string_naming_a_class_is_matched_only_here():
    """A documented difference: transformers compares the string with the module path only."""
    theirs, ours = capture(lambda impl: {"hidden_states": "Block"}, output_hidden_states=True)
    assert theirs["hidden_states"] == ()
    assert len(ours["hidden_states"]) == 4


def test_the_initial_hidden_state_can_be_left_out():
    def declaration(impl):
        return {"hidden_states": impl.capturing.OutputRecorder(Block, capture_initial_hidden_state=False)}

    theirs, ours = capture(declaration, output_hidden_states=True)
    assert_same(theirs, ours)
    assert len(ours["hidden_states"]) == 3


@pytest.mark.parametrize("selection", [[0, -1], [1], 2, [-2, 0]])
def test_selected_hidden_states_are_transformers_without_the_placeholders(selection):
    """transformers keeps every position and puts None where a state is not selected; we return only the selected."""
    theirs, ours = capture(by_class, config={"num_hidden_layers": 3}, output_hidden_states=selection)
    expected = tuple(state for state in theirs["hidden_states"] if state is not None)
    torch.testing.assert_close(ours["hidden_states"], expected, rtol=0, atol=0)


def test_an_index_out_of_range_selects_nothing_and_warns_only_here():
    with pytest.warns(UserWarning, match=r"selects \[7\], outside the 4 hidden states"):
        theirs, ours = capture(by_class, config={"num_hidden_layers": 3}, output_hidden_states=[0, 7])
    expected = tuple(state for state in theirs["hidden_states"] if state is not None)
    torch.testing.assert_close(ours["hidden_states"], expected, rtol=0, atol=0)


def test_return_dict_false_gives_the_same_tuple():
    def scenario(impl):
        model = toy_decoder(impl, by_class(impl))
        return model(**toy_inputs(), output_hidden_states=True, output_attentions=True, return_dict=False)

    theirs, ours = run_both(scenario)
    assert len(theirs) == len(ours) == 3
    for their_item, our_item in zip(theirs, ours, strict=True):
        torch.testing.assert_close(our_item, their_item, rtol=0, atol=0)


def test_a_recorder_is_a_dataclass_whose_fields_can_be_assigned():
    def scenario(impl):
        recorder = impl.capturing.OutputRecorder(Attention, index=1, layer_name="self_attn")
        recorder.target_class = Block
        recorder.layer_name = None
        return (
            recorder.target_class,
            recorder.index,
            recorder.layer_name,
            recorder.class_name,
            recorder.capture_initial_hidden_state,
            recorder == impl.capturing.OutputRecorder(Block, index=1),
        )

    assert run_both(scenario) == ((Block, 1, None, None, True, True),) * 2


def test_a_recorder_without_index_defaults_per_field_only_here():
    """A documented difference: transformers' default index is 0 for every field."""
    assert UPSTREAM.capturing.OutputRecorder(Attention).index == 0
    assert OURS.capturing.OutputRecorder(Attention).resolved_index("attentions") == 1
    assert OURS.capturing.OutputRecorder(Attention).resolved_index("hidden_states") == 0


def test_merge_with_config_defaults_fills_use_cache_from_the_config():
    def scenario(impl):
        class WithCache(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.config = type("Config", (), {"use_cache": True})()

            @impl.merge_with_config_defaults
            def forward(self, x, use_cache=None):
                return use_cache

        model = WithCache()
        return model(1), model(1, use_cache=False), model(1, False)

    assert run_both(scenario) == ((True, False, False),) * 2


def test_index_zero_selects_the_first_state_only_here():
    """A documented difference: transformers reads ``output_hidden_states=0`` as false."""
    theirs, ours = capture(by_class, config={"num_hidden_layers": 3}, output_hidden_states=0)
    assert "hidden_states" not in theirs
    assert len(ours["hidden_states"]) == 1
