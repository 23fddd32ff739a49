"""An encoder-decoder: transformers' T5ForConditionalGeneration (T5 v1.1: gated GELU, untied head),
and two hand-written ports of it.

The reference computes the relative position bias inside the first block's self-attention and
hands it to the next blocks, adds additive float masks (``finfo.min``) in every attention, and has
separate q/k/v (self and cross attention), ``wi_0``/``wi_1`` and a ``NewGELUActivation`` module.

- :class:`PlainT5` (``Style.PLAIN``): an encoder and a decoder that each compute the relative
  position bias once (their own ``relative_bias`` embedding) and pass it to every block;
  ``EncoderBlock(x, bias, mask)`` and ``DecoderBlock(x, memory, bias, mask, memory_mask)``, boolean
  masks, fused ``qkv``, fused cross-attention ``kv``, fused ``wi`` (gate/up), ``F.gelu``.
- :class:`KeywordT5` (``Style.KEYWORDS``): the same computation with transformers-style keyword
  arguments (``hidden_states=``, ``attention_mask=``, ``position_bias=``,
  ``encoder_hidden_states=``) and additive ``-inf`` masks.

Bugs are planted in layer :data:`BUGGY_LAYER` (of the decoder) where they concern one layer.
"""

from __future__ import annotations

import enum
import math

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

CONFIG = dict(
    vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
    relative_attention_num_buckets=8, relative_attention_max_distance=16, feed_forward_proj="gated-gelu",
    tie_word_embeddings=False, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, dropout_rate=0.0,
    layer_norm_epsilon=1e-6,
)  # fmt: skip
BUGGY_LAYER = 1


class Bug(str, enum.Enum):
    NONE = "none"
    SWAPPED_FUSED_HALVES = "gate and up halves of the fused wi weight swapped"
    SWAPPED_CROSS_KV = "key and value halves of the fused cross-attention kv weight swapped"
    MASK_OFF_BY_ONE = "decoder causal mask lets each token see the next one"
    ATTENTION_SCALE = "attention scores scaled by 1/sqrt(d_kv) (T5 does not scale)"
    NORM_SUBTRACTS_MEAN = "one norm subtracts the mean (a LayerNorm, not T5's RMS norm)"
    RESIDUAL_FROM_NORMED = "self-attention residual taken from the normed input"
    FEED_FORWARD_OUTPUT_HALVED = "every feed-forward halves its output after its output projection"


def reference():
    """A tiny T5ForConditionalGeneration with random parameters (eager attention)."""
    import transformers

    config = transformers.T5Config(**CONFIG, attn_implementation="eager")
    torch.manual_seed(0)
    return randomize(transformers.T5ForConditionalGeneration(config))


def inputs(batch: int = 2, source: int = 8, target: int = 6) -> dict:
    """``input_ids`` (the second sequence padded: its ``attention_mask`` ends in zeros) and ``decoder_input_ids``."""
    generator = torch.Generator().manual_seed(1)
    input_ids = torch.randint(2, CONFIG["vocab_size"], (batch, source), generator=generator)
    attention_mask = torch.ones(batch, source, dtype=torch.long)
    attention_mask[1:, source - 3 :] = 0
    input_ids = input_ids.masked_fill(attention_mask == 0, CONFIG["pad_token_id"])
    decoder_input_ids = torch.randint(2, CONFIG["vocab_size"], (batch, target), generator=generator)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "decoder_input_ids": decoder_input_ids}


def relative_buckets(query_length: int, key_length: int, bidirectional: bool) -> torch.Tensor:
    """T5's bucket of each (query, key) offset, [query_length, key_length]."""
    buckets, max_distance = (
        CONFIG["relative_attention_num_buckets"],
        CONFIG["relative_attention_max_distance"],
    )
    offset = torch.arange(key_length)[None, :] - torch.arange(query_length)[:, None]
    result = torch.zeros_like(offset)
    if bidirectional:
        buckets //= 2
        result += (offset > 0).long() * buckets
        offset = offset.abs()
    else:
        offset = -torch.clamp(offset, max=0)
    exact = buckets // 2
    large = (
        exact
        + (torch.log(offset.float() / exact) / math.log(max_distance / exact) * (buckets - exact)).long()
    )
    large = torch.clamp(large, max=buckets - 1)
    return result + torch.where(offset < exact, offset, large)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float, subtract_mean: bool = False):
        super().__init__()
        self.eps, self.subtract_mean = eps, subtract_mean
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        if self.subtract_mean:  # planted
            x = x - x.mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps))


def _attend(q, k, v, bias, mask, scale: float, boolean_mask: bool):
    """Attention over [batch, heads, tokens, d_kv] tensors: ``mask`` is boolean (True: attend) or additive."""
    scores = torch.matmul(q, k.transpose(2, 3)) * scale
    if bias is not None:
        scores = scores + bias
    scores = scores.masked_fill(~mask, float("-inf")) if boolean_mask else scores + mask
    return torch.matmul(F.softmax(scores.float(), dim=-1).type_as(scores), v)


def _heads(x, heads: int):
    batch, tokens, _ = x.shape
    return x.view(batch, tokens, heads, -1).transpose(1, 2)


def _merge(x):
    batch, heads, tokens, width = x.shape
    return x.transpose(1, 2).reshape(batch, tokens, heads * width)


def _scale(bug: Bug) -> float:
    return CONFIG["d_kv"] ** -0.5 if bug is Bug.ATTENTION_SCALE else 1.0  # planted


def _gated_gelu(fused: torch.Tensor) -> torch.Tensor:
    gate, up = fused.chunk(2, dim=-1)
    return F.gelu(gate, approximate="tanh") * up


def _feed_forward_output(output: torch.Tensor, bug: Bug) -> torch.Tensor:
    return output / 2 if bug is Bug.FEED_FORWARD_OUTPUT_HALVED else output  # planted


# ---- the plain port ------------------------------------------------------------------------------


class SelfAttention(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        inner = CONFIG["num_heads"] * CONFIG["d_kv"]
        self.scale = _scale(bug)
        self.qkv = nn.Linear(CONFIG["d_model"], 3 * inner, bias=False)
        self.out = nn.Linear(inner, CONFIG["d_model"], bias=False)

    def forward(self, x, bias, mask):
        q, k, v = (_heads(part, CONFIG["num_heads"]) for part in self.qkv(x).chunk(3, dim=-1))
        return self.out(_merge(_attend(q, k, v, bias, mask, self.scale, boolean_mask=True)))


class CrossAttention(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        inner = CONFIG["num_heads"] * CONFIG["d_kv"]
        self.scale = _scale(bug)
        self.q = nn.Linear(CONFIG["d_model"], inner, bias=False)
        self.kv = nn.Linear(CONFIG["d_model"], 2 * inner, bias=False)
        self.out = nn.Linear(inner, CONFIG["d_model"], bias=False)

    def forward(self, x, memory, mask):
        q = _heads(self.q(x), CONFIG["num_heads"])
        k, v = (_heads(part, CONFIG["num_heads"]) for part in self.kv(memory).chunk(2, dim=-1))
        return self.out(_merge(_attend(q, k, v, None, mask, self.scale, boolean_mask=True)))


class FeedForward(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.bug = bug
        self.wi = nn.Linear(CONFIG["d_model"], 2 * CONFIG["d_ff"], bias=False)
        self.wo = nn.Linear(CONFIG["d_ff"], CONFIG["d_model"], bias=False)

    def forward(self, x):
        return _feed_forward_output(self.wo(_gated_gelu(self.wi(x))), self.bug)


def _norm(bug: Bug, buggy: bool) -> RMSNorm:
    return RMSNorm(
        CONFIG["d_model"],
        CONFIG["layer_norm_epsilon"],
        subtract_mean=buggy and bug is Bug.NORM_SUBTRACTS_MEAN,
    )


class EncoderBlock(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.norm1, self.attn = _norm(bug, False), SelfAttention(bug)
        self.norm2, self.ffn = _norm(bug, False), FeedForward(bug)

    def forward(self, x, bias, mask):
        x = x + self.attn(self.norm1(x), bias, mask)
        return x + self.ffn(self.norm2(x))


class DecoderBlock(nn.Module):
    def __init__(self, bug: Bug, buggy: bool):
        super().__init__()
        self.residual_from_normed = buggy and bug is Bug.RESIDUAL_FROM_NORMED
        self.norm1, self.self_attn = _norm(bug, False), SelfAttention(bug)
        self.norm2, self.cross_attn = _norm(bug, buggy), CrossAttention(bug)
        self.norm3, self.ffn = _norm(bug, False), FeedForward(bug)

    def forward(self, x, memory, bias, mask, memory_mask):
        h = self.norm1(x)
        x = (h if self.residual_from_normed else x) + self.self_attn(h, bias, mask)
        x = x + self.cross_attn(self.norm2(x), memory, memory_mask)
        return x + self.ffn(self.norm3(x))


class Encoder(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.relative_bias = nn.Embedding(CONFIG["relative_attention_num_buckets"], CONFIG["num_heads"])
        self.blocks = nn.ModuleList(EncoderBlock(bug) for _ in range(CONFIG["num_layers"]))
        self.norm = _norm(bug, False)

    def forward(self, x, mask):
        length = x.shape[1]
        bias = self.relative_bias(relative_buckets(length, length, bidirectional=True)).permute(2, 0, 1)[None]
        for block in self.blocks:
            x = block(x, bias, mask)
        return self.norm(x)


class Decoder(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.bug = bug
        self.relative_bias = nn.Embedding(CONFIG["relative_attention_num_buckets"], CONFIG["num_heads"])
        self.blocks = nn.ModuleList(
            DecoderBlock(bug, i == BUGGY_LAYER) for i in range(CONFIG["num_decoder_layers"])
        )
        self.norm = _norm(bug, False)

    def forward(self, x, memory, memory_mask):
        length = x.shape[1]
        bias = self.relative_bias(relative_buckets(length, length, bidirectional=False)).permute(2, 0, 1)[
            None
        ]
        diagonal = 1 if self.bug is Bug.MASK_OFF_BY_ONE else 0
        mask = torch.ones(length, length, dtype=torch.bool).tril(diagonal)
        for block in self.blocks:
            x = block(x, memory, bias, mask, memory_mask)
        return self.norm(x)


class PlainT5(nn.Module):
    def __init__(self, bug: Bug = Bug.NONE):
        super().__init__()
        self.embed = nn.Embedding(CONFIG["vocab_size"], CONFIG["d_model"])
        self.encoder, self.decoder = Encoder(bug), Decoder(bug)
        self.lm_head = nn.Linear(CONFIG["d_model"], CONFIG["vocab_size"], bias=False)

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        padding = attention_mask.bool()[:, None, None, :]
        memory = self.encoder(self.embed(input_ids), padding)
        return self.lm_head(self.decoder(self.embed(decoder_input_ids), memory, padding))


def _fused(state: dict, prefix: str, names, swap: bool) -> torch.Tensor:
    """The weights of ``names`` under ``prefix`` stacked as one fused weight (in reverse order with ``swap``)."""
    parts = [state[f"{prefix}{name}.weight"] for name in names]
    if swap:
        parts.reverse()
    return torch.cat(parts)


def _wi(state: dict, prefix: str, swap: bool) -> torch.Tensor:
    return _fused(state, prefix + "DenseReluDense.", ["wi_0", "wi_1"], swap)


def _plain_weights(state: dict, bug: Bug) -> dict:
    weights = {
        "embed.weight": state["shared.weight"],
        "lm_head.weight": state["lm_head.weight"],
        "encoder.norm.weight": state["encoder.final_layer_norm.weight"],
        "decoder.norm.weight": state["decoder.final_layer_norm.weight"],
        "encoder.relative_bias.weight": state[
            "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        ],
        "decoder.relative_bias.weight": state[
            "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        ],
    }
    for stack, layers in (("encoder", CONFIG["num_layers"]), ("decoder", CONFIG["num_decoder_layers"])):
        for layer in range(layers):
            theirs, ours = f"{stack}.block.{layer}.layer.", f"{stack}.blocks.{layer}."
            buggy = stack == "decoder" and layer == BUGGY_LAYER
            attention = "attn" if stack == "encoder" else "self_attn"
            weights[f"{ours}norm1.weight"] = state[f"{theirs}0.layer_norm.weight"]
            weights[f"{ours}{attention}.qkv.weight"] = _fused(
                state, f"{theirs}0.SelfAttention.", "qkv", False
            )
            weights[f"{ours}{attention}.out.weight"] = state[f"{theirs}0.SelfAttention.o.weight"]
            feed_forward = 1
            if stack == "decoder":
                feed_forward = 2
                weights[f"{ours}norm2.weight"] = state[f"{theirs}1.layer_norm.weight"]
                weights[f"{ours}cross_attn.q.weight"] = state[f"{theirs}1.EncDecAttention.q.weight"]
                weights[f"{ours}cross_attn.kv.weight"] = _fused(
                    state, f"{theirs}1.EncDecAttention.", "kv", buggy and bug is Bug.SWAPPED_CROSS_KV
                )
                weights[f"{ours}cross_attn.out.weight"] = state[f"{theirs}1.EncDecAttention.o.weight"]
            norm = "norm3" if stack == "decoder" else "norm2"
            weights[f"{ours}{norm}.weight"] = state[f"{theirs}{feed_forward}.layer_norm.weight"]
            weights[f"{ours}ffn.wi.weight"] = _wi(
                state, f"{theirs}{feed_forward}.", buggy and bug is Bug.SWAPPED_FUSED_HALVES
            )
            weights[f"{ours}ffn.wo.weight"] = state[f"{theirs}{feed_forward}.DenseReluDense.wo.weight"]
    return weights


# ---- the transformers-style port -----------------------------------------------------------------


class KeywordSelfAttention(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        inner = CONFIG["num_heads"] * CONFIG["d_kv"]
        self.scale = _scale(bug)
        self.qkv_proj = nn.Linear(CONFIG["d_model"], 3 * inner, bias=False)
        self.o_proj = nn.Linear(inner, CONFIG["d_model"], bias=False)

    def forward(self, hidden_states, attention_mask=None, position_bias=None, **kwargs):
        q, k, v = (
            _heads(part, CONFIG["num_heads"]) for part in self.qkv_proj(hidden_states).chunk(3, dim=-1)
        )
        output = _attend(q, k, v, position_bias, attention_mask, self.scale, boolean_mask=False)
        return self.o_proj(_merge(output))


class KeywordCrossAttention(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        inner = CONFIG["num_heads"] * CONFIG["d_kv"]
        self.scale = _scale(bug)
        self.q_proj = nn.Linear(CONFIG["d_model"], inner, bias=False)
        self.kv_proj = nn.Linear(CONFIG["d_model"], 2 * inner, bias=False)
        self.o_proj = nn.Linear(inner, CONFIG["d_model"], bias=False)

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None, **kwargs):
        q = _heads(self.q_proj(hidden_states), CONFIG["num_heads"])
        k, v = (
            _heads(part, CONFIG["num_heads"]) for part in self.kv_proj(encoder_hidden_states).chunk(2, dim=-1)
        )
        return self.o_proj(_merge(_attend(q, k, v, None, attention_mask, self.scale, boolean_mask=False)))


class KeywordMLP(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.bug = bug
        self.gate_up_proj = nn.Linear(CONFIG["d_model"], 2 * CONFIG["d_ff"], bias=False)
        self.down_proj = nn.Linear(CONFIG["d_ff"], CONFIG["d_model"], bias=False)

    def forward(self, hidden_states):
        return _feed_forward_output(self.down_proj(_gated_gelu(self.gate_up_proj(hidden_states))), self.bug)


class KeywordLayer(nn.Module):
    def __init__(self, bug: Bug, decoder: bool, buggy: bool):
        super().__init__()
        self.residual_from_normed = buggy and bug is Bug.RESIDUAL_FROM_NORMED
        self.self_attn_layer_norm, self.self_attn = _norm(bug, False), KeywordSelfAttention(bug)
        if decoder:
            self.cross_attn_layer_norm, self.cross_attn = _norm(bug, buggy), KeywordCrossAttention(bug)
        self.final_layer_norm, self.mlp = _norm(bug, False), KeywordMLP(bug)

    def forward(
        self, hidden_states, attention_mask=None, position_bias=None, encoder_hidden_states=None,
        encoder_attention_mask=None, **kwargs,
    ):  # fmt: skip
        normed = self.self_attn_layer_norm(hidden_states)
        attended = self.self_attn(
            hidden_states=normed, attention_mask=attention_mask, position_bias=position_bias
        )
        hidden_states = (normed if self.residual_from_normed else hidden_states) + attended
        if encoder_hidden_states is not None:
            hidden_states = hidden_states + self.cross_attn(
                hidden_states=self.cross_attn_layer_norm(hidden_states),
                encoder_hidden_states=encoder_hidden_states,
                attention_mask=encoder_attention_mask,
            )
        return hidden_states + self.mlp(hidden_states=self.final_layer_norm(hidden_states))


class KeywordStack(nn.Module):
    def __init__(self, bug: Bug, decoder: bool):
        super().__init__()
        self.decoder, self.bug = decoder, bug
        self.relative_attention_bias = nn.Embedding(
            CONFIG["relative_attention_num_buckets"], CONFIG["num_heads"]
        )
        layers = CONFIG["num_decoder_layers"] if decoder else CONFIG["num_layers"]
        self.layers = nn.ModuleList(
            KeywordLayer(bug, decoder, decoder and i == BUGGY_LAYER) for i in range(layers)
        )
        self.final_layer_norm = _norm(bug, False)

    def forward(
        self, inputs_embeds, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None
    ):
        length = inputs_embeds.shape[1]
        buckets = relative_buckets(length, length, bidirectional=not self.decoder)
        position_bias = self.relative_attention_bias(buckets).permute(2, 0, 1).unsqueeze(0)
        hidden_states = inputs_embeds
        for layer in self.layers:
            hidden_states = layer(
                hidden_states=hidden_states,
                attention_mask=attention_mask,
                position_bias=position_bias,
                encoder_hidden_states=encoder_hidden_states,
                encoder_attention_mask=encoder_attention_mask,
            )
        return self.final_layer_norm(hidden_states)


def _additive(allowed: torch.Tensor) -> torch.Tensor:
    return torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))


class KeywordT5(nn.Module):
    def __init__(self, bug: Bug = Bug.NONE):
        super().__init__()
        self.bug = bug
        self.shared = nn.Embedding(CONFIG["vocab_size"], CONFIG["d_model"])
        self.encoder, self.decoder = KeywordStack(bug, decoder=False), KeywordStack(bug, decoder=True)
        self.lm_head = nn.Linear(CONFIG["d_model"], CONFIG["vocab_size"], bias=False)

    def forward(self, input_ids, attention_mask=None, decoder_input_ids=None):
        padding = _additive(attention_mask.bool()[:, None, None, :])
        encoded = self.encoder(inputs_embeds=self.shared(input_ids), attention_mask=padding)
        length = decoder_input_ids.shape[1]
        diagonal = 1 if self.bug is Bug.MASK_OFF_BY_ONE else 0
        causal = _additive(torch.ones(length, length, dtype=torch.bool).tril(diagonal))[None, None]
        decoded = self.decoder(
            inputs_embeds=self.shared(decoder_input_ids),
            attention_mask=causal,
            encoder_hidden_states=encoded,
            encoder_attention_mask=padding,
        )
        return self.lm_head(decoded)


def _keyword_weights(state: dict, bug: Bug) -> dict:
    plain = _plain_weights(state, bug)
    renames = [
        ("embed.", "shared."), ("relative_bias.", "relative_attention_bias."), (".blocks.", ".layers."),
        (".norm1.", ".self_attn_layer_norm."), (".attn.", ".self_attn."), (".qkv.", ".qkv_proj."),
        (".out.", ".o_proj."), (".q.", ".q_proj."), (".kv.", ".kv_proj."), (".ffn.wi.", ".mlp.gate_up_proj."),
        (".ffn.wo.", ".mlp.down_proj."), ("encoder.norm.", "encoder.final_layer_norm."),
        ("decoder.norm.", "decoder.final_layer_norm."),
    ]  # fmt: skip
    weights = {}
    for name, tensor in plain.items():
        decoder = name.startswith("decoder.blocks.")
        if decoder:
            name = name.replace(".norm2.", ".cross_attn_layer_norm.").replace(".norm3.", ".final_layer_norm.")
        else:
            name = name.replace(".norm2.", ".final_layer_norm.")
        for old, new in renames:
            name = name.replace(old, new)
        weights[name] = tensor
    return weights


def port(reference: nn.Module, style: Style, bug: Bug = Bug.NONE) -> nn.Module:
    """A port of ``reference`` in ``style`` with ``bug`` planted, its weights converted from the reference's."""
    state = dict(reference.state_dict())
    if style is Style.PLAIN:
        model, weights = PlainT5(bug), _plain_weights(state, bug)
    else:
        model, weights = KeywordT5(bug), _keyword_weights(state, bug)
    model.load_state_dict(weights)
    return model.eval()


def final_output(model: nn.Module, inputs: dict) -> torch.Tensor:
    """The logits, whichever model ``model`` is."""
    output = model(**inputs)
    return output if isinstance(output, torch.Tensor) else output.logits
