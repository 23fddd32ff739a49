"""With transformers installed: patching a tiny Llama, and capturing from Llama layers."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

from model_debugging.monkey_patching import apply_patches, clear_patch_mapping, register_patch_mapping
from model_debugging.output_capturing import capture_outputs, merge_with_config_defaults

transformers = pytest.importorskip("transformers")
modeling_llama = pytest.importorskip("transformers.models.llama.modeling_llama")

pytestmark = pytest.mark.integration


def tiny_llama_config():
    return transformers.LlamaConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=32,
        attn_implementation="eager",
    )


class ReplacementMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x):
        return self.proj(x)


@pytest.fixture
def llama_mlp_patch():
    clear_patch_mapping()
    register_patch_mapping({"LlamaMLP": ReplacementMLP})
    yield
    clear_patch_mapping()


def test_a_tiny_llama_uses_the_replacement_mlp_only_inside_apply_patches(llama_mlp_patch):
    with apply_patches() as swapped:
        patched = transformers.LlamaModel(tiny_llama_config())
    assert "transformers.models.llama.modeling_llama.LlamaMLP" in swapped
    assert all(type(layer.mlp) is ReplacementMLP for layer in patched.layers)
    assert modeling_llama.LlamaMLP.__name__ == "LlamaMLP"
    plain = transformers.LlamaModel(tiny_llama_config())
    assert all(type(layer.mlp) is modeling_llama.LlamaMLP for layer in plain.layers)


class OurLlama(transformers.LlamaModel):
    """LlamaModel whose forward body is wrapped by this package's decorators instead of transformers'."""

    forward = merge_with_config_defaults(capture_outputs(inspect.unwrap(transformers.LlamaModel.forward)))


def test_capture_on_llama_layers_matches_transformers_and_a_manual_loop():
    torch.manual_seed(0)
    config = tiny_llama_config()
    reference = transformers.LlamaModel(config).eval()
    ours = OurLlama(config).eval()
    ours.load_state_dict(reference.state_dict())
    input_ids = torch.tensor([[1, 5, 9, 3, 7]])

    with torch.no_grad():
        expected = reference(input_ids, output_hidden_states=True, output_attentions=True)
        out = ours(input_ids, output_hidden_states=True, output_attentions=True)
        manual = [ours.embed_tokens(input_ids)]
        position_ids = torch.arange(input_ids.shape[1])[None]
        position_embeddings = ours.rotary_emb(manual[0], position_ids=position_ids)
        mask = torch.full((5, 5), float("-inf")).triu(1)[None, None]
        for layer in ours.layers:
            manual.append(layer(manual[-1], attention_mask=mask, position_embeddings=position_embeddings))
        manual[-1] = ours.norm(manual[-1])

    assert type(out) is type(expected)
    assert len(out.hidden_states) == len(manual) == config.num_hidden_layers + 1
    for got, want, theirs in zip(out.hidden_states, manual, expected.hidden_states, strict=True):
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(got, theirs)
    for got, theirs in zip(out.attentions, expected.attentions, strict=True):
        torch.testing.assert_close(got, theirs)
    assert len(ours(input_ids, return_dict=False)) == 2  # last_hidden_state, past_key_values
