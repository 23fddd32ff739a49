"""`@merge_with_config_defaults`: None arguments take their value from the config."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from torch import nn

from model_debugging.output_capturing import capture_outputs, merge_with_config_defaults


class Cached(nn.Module):
    def __init__(self, **config):
        super().__init__()
        self.config = SimpleNamespace(**config)
        self.gradient_checkpointing = False

    @merge_with_config_defaults
    def forward(self, input_ids=None, use_cache=None, **kwargs):
        return {"use_cache": use_cache, **kwargs}


def test_use_cache_comes_from_config_when_missing_or_none():
    model = Cached(use_cache=True)
    assert model()["use_cache"] is True
    assert model(None, None)["use_cache"] is True
    assert model(use_cache=None)["use_cache"] is True


def test_explicit_values_win_positionally_and_by_keyword():
    model = Cached(use_cache=True)
    assert model(None, False)["use_cache"] is False
    assert model(use_cache=False)["use_cache"] is False


def test_a_config_without_the_attribute_leaves_the_argument_alone():
    assert Cached()()["use_cache"] is None


def test_gradient_checkpointing_turns_the_cache_off_while_training():
    model = Cached(use_cache=True)
    model.gradient_checkpointing = True
    with pytest.warns(UserWarning, match="gradient checkpointing"):
        assert model(use_cache=True)["use_cache"] is False
    model.eval()
    assert model()["use_cache"] is True


def test_declared_names_reach_var_kwargs():
    class Vision(Cached):
        @merge_with_config_defaults(names=("use_cache", "vision_feature_layer"))
        def forward(self, pixel_values=None, **kwargs):
            return kwargs

    model = Vision(use_cache=False, vision_feature_layer=-2)
    assert model() == {"use_cache": False, "vision_feature_layer": -2}
    assert model(vision_feature_layer=-1) == {"use_cache": False, "vision_feature_layer": -1}


def test_a_declared_name_the_forward_cannot_receive_is_rejected():
    with pytest.raises(TypeError, match=r"forward\(\) cannot receive 'vision_feature_layer'"):

        @merge_with_config_defaults(names=("vision_feature_layer",))
        def forward(self, pixel_values):
            return pixel_values


def test_the_default_name_is_skipped_when_the_forward_cannot_receive_it():
    class NoCache(Cached):
        @merge_with_config_defaults
        def forward(self, input_ids=None):
            return input_ids

    assert NoCache(use_cache=True)(3) == 3


def test_stacks_on_capture_outputs_and_sees_the_forward_signature(toy):
    class CachedDecoder(toy.Decoder):
        @merge_with_config_defaults
        @capture_outputs
        def forward(self, input_ids, use_cache=None, **kwargs):
            out = toy.Decoder.forward.__wrapped__(self, input_ids)
            out.attentions = ("use_cache", use_cache)
            return out

    model = CachedDecoder(toy.config(use_cache=True))
    out = model(toy.input_ids, None, output_hidden_states=True)
    assert out.attentions == ("use_cache", True) and len(out.hidden_states) == 4
