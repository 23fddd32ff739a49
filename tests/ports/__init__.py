"""Ports written by hand the way porters write them, of transformers architectures (ViT and
Mixtral twice), for the tests of compare and replay.

Each module holds a tiny reference (a transformers model built from a config, its parameters drawn
at random so that norms and biases matter), two ports of it and the conversion of its weights:

- :mod:`.gemma`: a decoder (GemmaForCausalLM: ``1 + w`` norms, RoPE, grouped-query attention);
- :mod:`.vit`: a vision encoder (ViTForImageClassification);
- :mod:`.t5`: an encoder-decoder (T5ForConditionalGeneration, gated-GELU feed-forward);
- :mod:`.mixtral`: a mixture of experts (MixtralForCausalLM: a router, experts per token);
- :mod:`.gpt2`: GPT2LMHeadModel, ported as karpathy/nanoGPT writes it (one style, ``STYLES``);
- :mod:`.bert`: BertForSequenceClassification in plain PyTorch (one style; ``port_inputs()``: the
  port takes ``(input_ids, segment_ids, input_mask)`` positionally).
- :mod:`.vit_conv`: a third ViT port (one style): a ``Conv2d`` patchify, the CLS token and the
  positions added in the model's own forward, where the reference has an embeddings module.
- :mod:`.mixtral_router`: a second Mixtral port (one style): a router module returning
  ``(weights, indices)`` where the reference's returns ``(logits, weights, indices)``.
- :mod:`.whisper`: WhisperForConditionalGeneration (one style): a conv front-end, fused projections,
  its own causal mask, and its tied LM head applied in its forward.
- :mod:`.llama`: LlamaModel (one style): ``Block(x, cos, sin, mask)`` given the ``[batch, tokens]``
  padding mask where the reference's layers get a 4-D mask (or none), per-sequence rotary tables.
- :mod:`.distilbert`: DistilBertModel (one style): ``Block(x, mask)`` given the padding mask where
  the reference's layers get a 4-D boolean mask.
- :mod:`.gpt2_masked`: GPT2LMHeadModel (one style): ``Block(x, mask)`` given the padding mask where
  the reference's blocks get theirs positionally (``None`` without padding).
- :mod:`.qwen2`: Qwen2ForCausalLM (one style): q/k/v biases in one fused ``qkv`` of unequal parts
  (grouped-query attention), a sliding-window layer whose mask the port makes itself, weights
  converted by ``load_weights``.
- :mod:`.llava`: LlavaForConditionalGeneration (one style): a vision-language model with a CLIP
  tower whose feature layer and CLS drop the port chooses in its forward, a projector, image
  features written into the embeddings with a boolean mask, a Llama decoder; ``load_weights``.
- :mod:`.deepseek_v3`: DeepseekV3ForCausalLM (one style): multi-head latent attention with complex
  rope, a dense layer then group-limited routing with a correction bias, a shared expert, one module
  per routed expert, weights converted by ``load_weights``.

Both ports of an architecture compute the same function as the reference, written differently:
fused projections (qkv, cross-attention kv, gate/up), their own attribute names, ``F.gelu`` where
the reference has an activation module, and one of two signature styles (:class:`Style`). Each
module's ``Bug`` lists the porting bugs it can plant, one at a time; with ``Bug.NONE`` the port's
outputs agree with the reference's to float32 rounding.

Usage::

    from tests.ports import Style, gemma

    reference = gemma.reference()
    port = gemma.port(reference, Style.PLAIN, gemma.Bug.ROPE_SIGN)
    reference(gemma.inputs()), port(gemma.inputs())
"""

from __future__ import annotations

import enum

import torch
from torch import nn


class Style(str, enum.Enum):
    """How a port's modules are called."""

    # Block(x, cos, sin, mask): positional arguments, boolean masks, no ``model`` wrapper, own names
    PLAIN = "plain"
    # transformers-style keyword arguments (hidden_states=, attention_mask=, position_embeddings=)
    KEYWORDS = "keywords"


def randomize(model: nn.Module, seed: int = 0, scale: float = 0.2) -> nn.Module:
    """Draw every parameter of ``model`` at random (norm weights around 1 stay around 1, biases
    around 0 leave 0), so that a bug in a norm or a bias changes the outputs."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            noise = torch.randn(parameter.shape, generator=generator) * scale
            parameter.copy_(parameter + noise)
    return model.eval()


def left_padded(input_ids: torch.Tensor, left_padding: int = 0) -> dict:
    """``input_ids`` ``[2, tokens]`` with an ``attention_mask`` padding the second sequence's first
    ``left_padding`` tokens (none by default: a porter's first run)."""
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, :left_padding] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask}
