"""Argument adapters for the hand-written ports of ``tests/ports``, written as their porter would.

The plain-style ports take ``Block(x, cos, sin, mask)``, boolean masks and a position bias computed
once per stack; the reference's modules were called transformers-style. Each adapter turns the
reference's recorded call into the port's. The keyword-style ports accept the reference's calls,
except for stacks that take embeddings where the reference took token ids.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.ports import Style, gemma, t5, vit


def _allowed(additive: torch.Tensor) -> torch.Tensor:
    """An additive float mask (0 where attending, a large negative elsewhere) as a boolean one."""
    return additive == 0


def _padding(attention_mask: torch.Tensor) -> torch.Tensor:
    return attention_mask.bool()[:, None, None, :]


def gemma_plain(model):
    def block(_block, hidden_states, attention_mask=None, position_embeddings=None, **_):
        cos, sin = position_embeddings
        return (hidden_states, cos[:, None], sin[:, None], _allowed(attention_mask)), {}

    return {gemma.Block: block, gemma.Attention: block}


def gemma_keywords(model):
    def backbone(_backbone, input_ids=None, **_):
        return (input_ids,), {}

    return {gemma.KeywordBackbone: backbone}


def t5_plain(model):
    def bias(stack, length, bidirectional):
        buckets = t5.relative_buckets(length, length, bidirectional=bidirectional)
        return stack.relative_bias(buckets).permute(2, 0, 1)[None]

    def encoder(_encoder, input_ids=None, attention_mask=None, **_):
        return (model.embed(input_ids), _padding(attention_mask)), {}

    def decoder(_decoder, input_ids=None, encoder_hidden_states=None, encoder_attention_mask=None, **_):
        return (model.embed(input_ids), encoder_hidden_states, _padding(encoder_attention_mask)), {}

    def encoder_block(_block, hidden_states, attention_mask=None, position_bias=None, *_, **__):
        if position_bias is None:
            position_bias = bias(model.encoder, hidden_states.shape[1], bidirectional=True)
        return (hidden_states, position_bias, _allowed(attention_mask)), {}

    def decoder_block(
        _block, hidden_states, attention_mask=None, position_bias=None, encoder_hidden_states=None,
        encoder_attention_mask=None, *_, **__,
    ):  # fmt: skip
        if position_bias is None:
            position_bias = bias(model.decoder, hidden_states.shape[1], bidirectional=False)
        memory_mask = _allowed(encoder_attention_mask)
        return (
            hidden_states,
            encoder_hidden_states,
            position_bias,
            _allowed(attention_mask),
            memory_mask,
        ), {}

    def self_attention(stack, bidirectional):
        def adapt(_attention, hidden_states, mask=None, position_bias=None, **_):
            if position_bias is None:
                position_bias = bias(stack, hidden_states.shape[1], bidirectional)
            return (hidden_states, position_bias, _allowed(mask)), {}

        return adapt

    def cross_attention(_attention, hidden_states, mask=None, key_value_states=None, **_):
        return (hidden_states, key_value_states, _allowed(mask)), {}

    return {
        t5.Encoder: encoder,
        t5.Decoder: decoder,
        t5.EncoderBlock: encoder_block,
        t5.DecoderBlock: decoder_block,
        "encoder.blocks.*.attn": self_attention(model.encoder, True),
        "decoder.blocks.*.self_attn": self_attention(model.decoder, False),
        t5.CrossAttention: cross_attention,
    }


def t5_keywords(model):
    def bias(stack, length):
        buckets = t5.relative_buckets(length, length, bidirectional=not stack.decoder)
        return stack.relative_attention_bias(buckets).permute(2, 0, 1).unsqueeze(0)

    def stack(
        _stack,
        input_ids=None,
        attention_mask=None,
        encoder_hidden_states=None,
        encoder_attention_mask=None,
        **_,
    ):
        if encoder_hidden_states is None:
            padding = t5._additive(_padding(attention_mask))
            return (), {"inputs_embeds": model.shared(input_ids), "attention_mask": padding}
        length = input_ids.shape[1]
        causal = t5._additive(torch.ones(length, length, dtype=torch.bool).tril())[None, None]
        return (), {
            "inputs_embeds": model.shared(input_ids),
            "attention_mask": causal,
            "encoder_hidden_states": encoder_hidden_states,
            "encoder_attention_mask": t5._additive(_padding(encoder_attention_mask)),
        }

    def layer(of_stack):
        def adapt(
            _layer, hidden_states, attention_mask=None, position_bias=None, encoder_hidden_states=None,
            encoder_attention_mask=None, *_, **__,
        ):  # fmt: skip
            if position_bias is None:  # the reference's first block computes it, the port's stack does
                position_bias = bias(of_stack, hidden_states.shape[1])
            return (hidden_states,), {
                "attention_mask": attention_mask,
                "position_bias": position_bias,
                "encoder_hidden_states": encoder_hidden_states,
                "encoder_attention_mask": encoder_attention_mask,
            }

        return adapt

    def self_attention(of_stack):
        def adapt(_attention, hidden_states, mask=None, position_bias=None, **_):
            if position_bias is None:
                position_bias = bias(of_stack, hidden_states.shape[1])
            return (hidden_states,), {"attention_mask": mask, "position_bias": position_bias}

        return adapt

    def cross_attention(_attention, hidden_states, mask=None, key_value_states=None, **_):
        return (hidden_states,), {"encoder_hidden_states": key_value_states, "attention_mask": mask}

    return {
        t5.KeywordStack: stack,
        "encoder.layers.*.self_attn": self_attention(model.encoder),
        "decoder.layers.*.self_attn": self_attention(model.decoder),
        "encoder.layers.?": layer(model.encoder),
        "decoder.layers.?": layer(model.decoder),
        t5.KeywordCrossAttention: cross_attention,
    }


def _patches(_linear, pixel_values):
    """The reference's Conv2d gets pixels; the port's Linear, the patches cut from them."""
    patch = vit.CONFIG["patch_size"]
    return (F.unfold(pixel_values, kernel_size=patch, stride=patch).transpose(1, 2),), {}


def vit_plain(model):
    def block(_block, hidden_states, *_, **__):
        return (hidden_states,), {}

    return {vit.Block: block, "patch_embed": _patches}


def vit_keywords(model):
    def pixels_only(_module, pixel_values, *_, **__):
        return (pixel_values,), {}

    return {
        vit.KeywordEncoder: pixels_only,
        vit.KeywordEmbeddings: pixels_only,
        "*.patch_projection": _patches,
    }


ADAPTERS = {
    ("gemma", Style.PLAIN): gemma_plain,
    ("gemma", Style.KEYWORDS): gemma_keywords,
    ("t5", Style.PLAIN): t5_plain,
    ("t5", Style.KEYWORDS): t5_keywords,
    ("vit", Style.PLAIN): vit_plain,
    ("vit", Style.KEYWORDS): vit_keywords,
}
