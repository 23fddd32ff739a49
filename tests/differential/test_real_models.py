"""Real transformers models from tiny configs: their `capture_outputs` and ours collect the same tensors.

Each model runs twice on the same inputs, once as transformers ships it and once with our decorator
swapped in for transformers' (see swap_decorator.py).
"""

from __future__ import annotations

import pytest
import torch
import transformers

from tests.differential.swap_decorator import our_capture_outputs

pytestmark = pytest.mark.integration

FIELDS = ("last_hidden_state", "hidden_states", "attentions", "cross_attentions")


def run_both(model, expected_swaps: int, **inputs):
    with torch.no_grad():
        theirs = model(**inputs)
        with our_capture_outputs(model) as swapped:
            ours = model(**inputs)
    assert swapped == expected_swaps
    for field in FIELDS:
        their_value, our_value = getattr(theirs, field, None), getattr(ours, field, None)
        assert (their_value is None) == (our_value is None), field
        if their_value is not None:
            torch.testing.assert_close(our_value, their_value, rtol=0, atol=0, msg=field)
    return ours


def tiny(config_class, **values):
    torch.manual_seed(0)
    return config_class(**values, attn_implementation="eager")


def test_llama():
    config = tiny(
        transformers.LlamaConfig,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=100,
    )
    model = transformers.LlamaModel(config).eval()
    input_ids = torch.randint(0, 100, (2, 7), generator=torch.Generator().manual_seed(1))
    ours = run_both(
        model, 1, input_ids=input_ids, output_hidden_states=True, output_attentions=True, use_cache=False
    )
    assert len(ours.hidden_states) == 4 and len(ours.attentions) == 3
    selected = run_both(model, 1, input_ids=input_ids, output_hidden_states=True, use_cache=False)
    assert selected.attentions is None


def test_a_text_decoder_cross_attending_to_image_features():
    config = tiny(
        transformers.BlipTextConfig,
        vocab_size=100,
        hidden_size=32,
        encoder_hidden_size=24,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=32,
    )
    model = transformers.BlipTextModel(config).eval()
    generator = torch.Generator().manual_seed(1)
    image_features = torch.randn(2, 9, 24, generator=generator)
    ours = run_both(
        model,
        1,
        input_ids=torch.randint(0, 100, (2, 6), generator=generator),
        encoder_hidden_states=image_features,
        output_hidden_states=True,
        output_attentions=True,
    )
    assert len(ours.attentions) == len(ours.cross_attentions) == 2
    assert ours.cross_attentions[0].shape[-1] == 9  # attends to the 9 image positions


def test_a_clip_vision_encoder_declared_with_untied_hidden_states():
    config = tiny(
        transformers.CLIPVisionConfig,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        image_size=16,
        patch_size=8,
        projection_dim=16,
    )
    model = transformers.CLIPVisionModel(config).eval()
    pixels = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))
    ours = run_both(model, 1, pixel_values=pixels, output_hidden_states=True, output_attentions=True)
    assert len(ours.hidden_states) == 3 and len(ours.attentions) == 2
