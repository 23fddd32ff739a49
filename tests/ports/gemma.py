"""A decoder: transformers' GemmaForCausalLM, and two hand-written ports of it.

The reference's RMSNorm scales by ``1 + w``, its embedding module multiplies by ``sqrt(hidden)``,
RoPE rotates the two halves of each head, the mask is an additive float mask (``finfo.min``), the
activation is a ``GELUTanh`` module, and the projections are separate (q/k/v, gate/up).

- :class:`PlainGemma` (``Style.PLAIN``): ``Block(x, cos, sin, mask)``, cos/sin computed once in
  the model's forward, a rotary helper applied to q and to k in turn, a boolean mask, fused
  ``wqkv`` and ``w_gate_up``, ``F.gelu``, no ``model`` wrapper (``tok_embeddings``, ``blocks``,
  ``norm``, ``output``). With ``scale_in_forward`` the embedding is a plain ``nn.Embedding`` and the
  model's forward multiplies by ``sqrt(hidden)`` (logic moved out of the embedding module). With
  ``flat`` each block runs the attention's and the feed-forward's code itself: its ``wqkv`` (as wide
  as the reference's ``gate_proj``) and ``w_gate_up`` are called by the block.
- :class:`KeywordGemma` (``Style.KEYWORDS``): transformers-style keyword arguments
  (``hidden_states=``, ``attention_mask=``, ``position_embeddings=``), a ``model`` wrapper, a rotary
  module, an additive ``-inf`` mask, fused ``qkv_proj`` and ``gate_up_proj``, ``F.gelu``.

Bugs are planted in layer :data:`BUGGY_LAYER` where they concern one layer.
"""

from __future__ import annotations

import enum
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

CONFIG = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
    head_dim=8, vocab_size=100, max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=10000.0,
    bos_token_id=None, eos_token_id=None, pad_token_id=None,
)  # fmt: skip
BUGGY_LAYER = 1


class Bug(str, enum.Enum):
    NONE = "none"
    ROPE_CONVENTION = "RoPE rotates interleaved pairs instead of halves"
    ROPE_SIGN = "RoPE rotation with the wrong sign"
    SWAPPED_FUSED_HALVES = "gate and up halves of the fused gate/up weight swapped"
    MASK_OFF_BY_ONE = "causal mask lets each token see the next one"
    MISSING_ONE_PLUS_W = "one norm scales by w instead of 1 + w"
    RESIDUAL_FROM_NORMED = "attention residual taken from the normed input"
    MISSING_FEED_FORWARD_RESIDUAL = "every block returns its feed-forward's output, without the residual"
    FINAL_NORM_SKIPPED = "the final norm before the LM head never applied (its weight is loaded)"
    ATTENTION_OUTPUT_HALVED = "every attention halves its output after its output projection"
    MLP_OUTPUT_SCALED = "every MLP scales its output by 0.7 after its down projection"


def reference():
    """A tiny GemmaForCausalLM with random parameters (eager attention)."""
    import transformers

    config = transformers.GemmaConfig(**CONFIG, attn_implementation="eager")
    torch.manual_seed(0)
    return randomize(transformers.GemmaForCausalLM(config))


def inputs(batch: int = 2, tokens: int = 8) -> torch.Tensor:
    """``input_ids`` of shape ``[batch, tokens]``."""
    return torch.randint(0, CONFIG["vocab_size"], (batch, tokens), generator=torch.Generator().manual_seed(1))


# ---- the plain port ------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float, one_plus: bool = True):
        super().__init__()
        self.eps, self.one_plus = eps, one_plus
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        scale = 1.0 + self.weight.float() if self.one_plus else self.weight.float()
        return (normed * scale).type_as(x)


def rope_tables(length: int, head_dim: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of shape [length, head_dim], each frequency repeated over the two halves."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    freqs = torch.arange(length).float()[:, None] * inv_freq[None, :]
    angles = torch.cat((freqs, freqs), dim=-1)
    return angles.cos(), angles.sin()


def rotate_half(x, sign: float = 1.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-sign * second, sign * first), dim=-1)


def rotate_pairs(x):
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((-odd, even), dim=-1).flatten(-2)


def apply_rope(x, cos, sin, bug: Bug = Bug.NONE):
    """Rotate one tensor [batch, heads, tokens, head_dim] by the position angles."""
    if bug is Bug.ROPE_CONVENTION:  # planted: rotates neighbouring pairs
        return x * cos + rotate_pairs(x) * sin
    return x * cos + rotate_half(x, -1.0 if bug is Bug.ROPE_SIGN else 1.0) * sin


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, head_dim: int, bug: Bug):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.bug = heads, kv_heads, head_dim, bug
        self.wqkv = nn.Linear(dim, (heads + 2 * kv_heads) * head_dim, bias=False)
        self.wo = nn.Linear(heads * head_dim, dim, bias=False)

    def forward(self, x, cos, sin, mask):
        batch, length, _ = x.shape
        q, k, v = self.wqkv(x).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], dim=-1
        )
        q = q.view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin, self.bug), apply_rope(k, cos, sin, self.bug)
        repeats = self.heads // self.kv_heads
        k, v = k.repeat_interleave(repeats, dim=1), v.repeat_interleave(repeats, dim=1)
        scores = torch.matmul(q, k.transpose(2, 3)) * self.head_dim**-0.5
        scores = scores.masked_fill(~mask, float("-inf"))
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = self.wo(torch.matmul(probs, v).transpose(1, 2).reshape(batch, length, -1))
        return out / 2 if self.bug is Bug.ATTENTION_OUTPUT_HALVED else out


def _mlp_output(output: torch.Tensor, bug: Bug) -> torch.Tensor:
    return output * 0.7 if bug is Bug.MLP_OUTPUT_SCALED else output  # planted


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int, bug: Bug):
        super().__init__()
        self.bug = bug
        self.w_gate_up = nn.Linear(dim, 2 * hidden, bias=False)
        self.w_down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        gate, up = self.w_gate_up(x).chunk(2, dim=-1)
        return _mlp_output(self.w_down(F.gelu(gate, approximate="tanh") * up), self.bug)


class Block(nn.Module):
    def __init__(self, config: dict, bug: Bug, buggy: bool, flat: bool = False):
        super().__init__()
        self.flat = flat
        dim, eps = config["hidden_size"], config["rms_norm_eps"]
        self.residual_from_normed = buggy and bug is Bug.RESIDUAL_FROM_NORMED
        self.no_feed_forward_residual = bug is Bug.MISSING_FEED_FORWARD_RESIDUAL  # in every block
        self.attn_norm = RMSNorm(dim, eps)
        self.attn = Attention(
            dim, config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"], bug
        )
        self.ffn_norm = RMSNorm(dim, eps, one_plus=not (buggy and bug is Bug.MISSING_ONE_PLUS_W))
        self.ffn = FeedForward(dim, config["intermediate_size"], bug)

    def forward(self, x, cos, sin, mask):
        attn, ffn = self.attn, self.ffn
        if self.flat:  # their code, without a call of either module: a block that projects itself
            attn, ffn = partial(Attention.forward, self.attn), partial(FeedForward.forward, self.ffn)
        h = self.attn_norm(x)
        x = (h if self.residual_from_normed else x) + attn(h, cos, sin, mask)
        return (0 if self.no_feed_forward_residual else x) + ffn(self.ffn_norm(x))


class ScaledEmbedding(nn.Embedding):
    def forward(self, tokens):
        return super().forward(tokens) * torch.tensor(self.embedding_dim**0.5, dtype=self.weight.dtype)


class PlainGemma(nn.Module):
    def __init__(
        self,
        config: dict = CONFIG,
        bug: Bug = Bug.NONE,
        *,
        scale_in_forward: bool = False,
        flat: bool = False,
    ):
        super().__init__()
        self.config, self.bug, self.scale_in_forward = config, bug, scale_in_forward
        embedding = nn.Embedding if scale_in_forward else ScaledEmbedding
        self.tok_embeddings = embedding(config["vocab_size"], config["hidden_size"])
        self.blocks = nn.ModuleList(
            Block(config, bug, layer == BUGGY_LAYER, flat) for layer in range(config["num_hidden_layers"])
        )
        self.norm = RMSNorm(config["hidden_size"], config["rms_norm_eps"])
        self.output = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False)

    def forward(self, tokens):
        length = tokens.shape[1]
        x = self.tok_embeddings(tokens)
        if self.scale_in_forward:
            x = x * torch.tensor(self.config["hidden_size"] ** 0.5, dtype=x.dtype)
        cos, sin = rope_tables(length, self.config["head_dim"], self.config["rope_theta"])
        diagonal = 1 if self.bug is Bug.MASK_OFF_BY_ONE else 0
        mask = torch.ones(length, length, dtype=torch.bool).tril(diagonal)
        for block in self.blocks:
            x = block(x, cos, sin, mask)
        return self.output(x if self.bug is Bug.FINAL_NORM_SKIPPED else self.norm(x))


def _plain_weights(state: dict, config: dict, bug: Bug) -> dict:
    weights = {
        "tok_embeddings.weight": state["model.embed_tokens.weight"],
        "norm.weight": state["model.norm.weight"],
        "output.weight": state["lm_head.weight"],
    }
    for layer in range(config["num_hidden_layers"]):
        theirs, ours = f"model.layers.{layer}.", f"blocks.{layer}."
        weights[ours + "attn_norm.weight"] = state[theirs + "input_layernorm.weight"]
        weights[ours + "ffn_norm.weight"] = state[theirs + "post_attention_layernorm.weight"]
        weights[ours + "attn.wqkv.weight"] = torch.cat(
            [state[f"{theirs}self_attn.{name}_proj.weight"] for name in "qkv"]
        )
        weights[ours + "attn.wo.weight"] = state[theirs + "self_attn.o_proj.weight"]
        weights[ours + "ffn.w_gate_up.weight"] = _gate_up(state, theirs, bug, layer)
        weights[ours + "ffn.w_down.weight"] = state[theirs + "mlp.down_proj.weight"]
    return weights


def _gate_up(state: dict, prefix: str, bug: Bug, layer: int) -> torch.Tensor:
    gate, up = state[prefix + "mlp.gate_proj.weight"], state[prefix + "mlp.up_proj.weight"]
    if bug is Bug.SWAPPED_FUSED_HALVES and layer == BUGGY_LAYER:  # planted
        return torch.cat([up, gate])
    return torch.cat([gate, up])


# ---- the transformers-style port -----------------------------------------------------------------


def apply_rotary(query, key, cos, sin, bug: Bug = Bug.NONE):
    """Rotate query and key [batch, heads, tokens, head_dim] by cos/sin [batch, tokens, head_dim]."""
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return apply_rope(query, cos, sin, bug), apply_rope(key, cos, sin, bug)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, base: float):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, position_ids):
        freqs = position_ids[..., None].float() * self.inv_freq
        angles = torch.cat((freqs, freqs), dim=-1)
        return angles.cos().to(x.dtype), angles.sin().to(x.dtype)


class KeywordAttention(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        self.heads, self.kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
        self.head_dim, self.bug = config["head_dim"], bug
        widths = [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim]
        self.widths = widths
        self.qkv_proj = nn.Linear(config["hidden_size"], sum(widths), bias=False)
        self.o_proj = nn.Linear(widths[0], config["hidden_size"], bias=False)

    def forward(self, hidden_states, attention_mask=None, position_embeddings=None, **kwargs):
        batch, length, _ = hidden_states.shape
        query, key, value = (
            states.view(batch, length, -1, self.head_dim).transpose(1, 2)
            for states in self.qkv_proj(hidden_states).split(self.widths, dim=-1)
        )
        query, key = apply_rotary(query, key, *position_embeddings, bug=self.bug)
        repeats = self.heads // self.kv_heads
        key, value = key.repeat_interleave(repeats, dim=1), value.repeat_interleave(repeats, dim=1)
        weights = torch.matmul(query, key.transpose(2, 3)) * self.head_dim**-0.5
        if attention_mask is not None:
            weights = weights + attention_mask
        weights = F.softmax(weights, dim=-1, dtype=torch.float32).to(query.dtype)
        output = self.o_proj(torch.matmul(weights, value).transpose(1, 2).reshape(batch, length, -1))
        return output / 2 if self.bug is Bug.ATTENTION_OUTPUT_HALVED else output, weights


class KeywordMLP(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        self.bug = bug
        self.gate_up_proj = nn.Linear(config["hidden_size"], 2 * config["intermediate_size"], bias=False)
        self.down_proj = nn.Linear(config["intermediate_size"], config["hidden_size"], bias=False)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return _mlp_output(self.down_proj(F.gelu(gate, approximate="tanh") * up), self.bug)


class KeywordDecoderLayer(nn.Module):
    def __init__(self, config: dict, bug: Bug, buggy: bool):
        super().__init__()
        dim, eps = config["hidden_size"], config["rms_norm_eps"]
        self.residual_from_normed = buggy and bug is Bug.RESIDUAL_FROM_NORMED
        self.no_feed_forward_residual = bug is Bug.MISSING_FEED_FORWARD_RESIDUAL  # in every layer
        self.input_layernorm = RMSNorm(dim, eps)
        self.self_attn = KeywordAttention(config, bug)
        self.post_attention_layernorm = RMSNorm(
            dim, eps, one_plus=not (buggy and bug is Bug.MISSING_ONE_PLUS_W)
        )
        self.mlp = KeywordMLP(config, bug)

    def forward(self, hidden_states, attention_mask=None, position_embeddings=None, **kwargs):
        normed = self.input_layernorm(hidden_states)
        attended, _ = self.self_attn(
            hidden_states=normed, attention_mask=attention_mask, position_embeddings=position_embeddings
        )
        hidden_states = (normed if self.residual_from_normed else hidden_states) + attended
        residual = 0 if self.no_feed_forward_residual else hidden_states
        return residual + self.mlp(self.post_attention_layernorm(hidden_states))


class KeywordBackbone(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        self.bug = bug
        self.embed_tokens = ScaledEmbedding(config["vocab_size"], config["hidden_size"])
        self.layers = nn.ModuleList(
            KeywordDecoderLayer(config, bug, layer == BUGGY_LAYER)
            for layer in range(config["num_hidden_layers"])
        )
        self.norm = RMSNorm(config["hidden_size"], config["rms_norm_eps"])
        self.rotary_emb = RotaryEmbedding(config["head_dim"], config["rope_theta"])

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        length = input_ids.shape[1]
        position_ids = torch.arange(length)[None]
        diagonal = 2 if self.bug is Bug.MASK_OFF_BY_ONE else 1
        attention_mask = torch.full((length, length), float("-inf")).triu(diagonal)[None, None]
        position_embeddings = self.rotary_emb(hidden_states, position_ids=position_ids)
        for layer in self.layers:
            hidden_states = layer(
                hidden_states, attention_mask=attention_mask, position_embeddings=position_embeddings
            )
        return hidden_states if self.bug is Bug.FINAL_NORM_SKIPPED else self.norm(hidden_states)


class KeywordGemma(nn.Module):
    def __init__(self, config: dict = CONFIG, bug: Bug = Bug.NONE):
        super().__init__()
        self.model = KeywordBackbone(config, bug)
        self.lm_head = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def _keyword_weights(state: dict, config: dict, bug: Bug) -> dict:
    weights = {}
    for name, tensor in state.items():
        if ".self_attn.q_proj." in name:
            prefix = name.removesuffix("q_proj.weight")
            weights[prefix + "qkv_proj.weight"] = torch.cat(
                [state[f"{prefix}{part}_proj.weight"] for part in "qkv"]
            )
        elif ".mlp.gate_proj." in name:
            prefix = name.removesuffix("mlp.gate_proj.weight")
            weights[prefix + "mlp.gate_up_proj.weight"] = _gate_up(
                state, prefix, bug, int(prefix.split(".")[2])
            )
        elif not any(f".{part}_proj." in name for part in ("k", "v", "up")):
            weights[name] = tensor
    return weights


def port(reference: nn.Module, style: Style, bug: Bug = Bug.NONE, **options) -> nn.Module:
    """A port of ``reference`` in ``style`` with ``bug`` planted, its weights converted from the reference's."""
    config = {**CONFIG, "rope_theta": float(_rope_theta(reference.config))}
    state = dict(reference.state_dict())
    if style is Style.PLAIN:
        model, weights = PlainGemma(config, bug, **options), _plain_weights(state, config, bug)
    else:
        model, weights = KeywordGemma(config, bug), _keyword_weights(state, config, bug)
    model.load_state_dict(weights)
    return model.eval()


def _rope_theta(config) -> float:
    parameters = getattr(config, "rope_parameters", None) or {}
    return parameters.get("rope_theta", getattr(config, "rope_theta", 10000.0))


def final_output(model: nn.Module, input_ids: torch.Tensor) -> torch.Tensor:
    """The logits, whichever model ``model`` is."""
    output = model(input_ids)
    return output if isinstance(output, torch.Tensor) else output.logits
