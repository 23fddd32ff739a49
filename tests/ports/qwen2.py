"""A decoder with sliding-window layers: transformers' Qwen2ForCausalLM, and a port of it written by
hand in plain PyTorch.

The reference (SDPA attention, transformers' default) has q/k/v projections with a bias and an
output projection without one, grouped-query attention (4 query heads, 2 key/value heads), RMS
norms (eps 1e-6), ``(cos, sin)`` computed once in ``rotary_emb``, and two masks made in its model's
forward: a causal one for ``full_attention`` layers and a sliding-window one (the last 4 tokens)
for ``sliding_attention`` layers, each passed to its layers as ``attention_mask``.

:class:`QwenLM` (``Style.PLAIN``, the only style) is written as a porter writes it from the paper:
``forward(input_ids, attention_mask)``, its own names (``embed``, ``blocks.N.ln_1 / attn.qkv /
attn.proj / ln_2 / ffn.w1 / w3 / w2``, ``ln_f``, ``head``), one fused ``qkv`` projection of unequal
parts (32 + 16 + 16) with its bias, key/value heads repeated with ``repeat_interleave``, its rotary
tables computed in its forward, ``Block(x, cos, sin, mask)`` given the ``[batch, tokens]`` padding
mask and making its causal (and sliding-window) mask itself, ``F.silu`` where the reference has an
activation module, and no ``model``, ``rotary_emb`` or ``self_attn`` module. :func:`load_weights`
converts the reference's state dict as a porter's conversion script does.
"""

from __future__ import annotations

import enum

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, left_padded, randomize

STYLES = (Style.PLAIN,)
SLIDING_WINDOW = 4


class Bug(str, enum.Enum):
    NONE = "none"
    SCORES_OVER_HEAD_DIM = "attention scores divided by head_dim instead of sqrt(head_dim)"
    TRANSPOSED_OUTPUT_PROJECTION = "the output projection's weight loaded transposed"
    NO_QKV_BIAS = "the fused qkv projection without the bias q/k/v have"
    NORM_EPS = "every RMS norm with eps 1e-3 instead of the config's 1e-6"
    WINDOW_OFF_BY_ONE = "the sliding window keeps the last 5 tokens instead of 4"
    KEY_POSITIONS_SHIFTED = "keys rotated for positions 1..T, queries for 0..T-1"


def config():
    import transformers

    return transformers.Qwen2Config(
        vocab_size=99, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6, use_sliding_window=True,
        sliding_window=SLIDING_WINDOW, layer_types=["full_attention", "sliding_attention"],
        tie_word_embeddings=False,
    )  # fmt: skip


def reference():
    """A tiny Qwen2ForCausalLM with random parameters (so that the biases and norms matter)."""
    import transformers

    torch.manual_seed(0)
    return randomize(transformers.Qwen2ForCausalLM(config()), scale=0.1)


def inputs(left_padding: int = 0) -> dict:
    """``input_ids`` ``[2, 10]``, left-padded by ``left_padding`` tokens (see :func:`left_padded`)."""
    return left_padded(
        torch.randint(0, 99, (2, 10), generator=torch.Generator().manual_seed(1)), left_padding
    )


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(width)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def _rotated(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin


def rotary_tables(positions: torch.Tensor, head_dim: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(cos, sin)`` of shape ``[tokens, head_dim]`` for ``positions``."""
    inverse = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = positions[:, None].float() * inverse
    angles = torch.cat((angles, angles), -1)
    return angles.cos(), angles.sin()


class Attention(nn.Module):
    def __init__(self, cfg, window: int | None, bug: Bug):
        super().__init__()
        self.heads, self.kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.head_dim = cfg.hidden_size // self.heads
        self.window, self.bug = window, bug
        width = cfg.hidden_size
        self.qkv = nn.Linear(
            width, (self.heads + 2 * self.kv_heads) * self.head_dim, bias=bug is not Bug.NO_QKV_BIAS
        )
        self.proj = nn.Linear(width, width, bias=False)

    def forward(self, x, cos, sin, mask):
        batch, tokens, width = x.shape
        sizes = (self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim)
        q, k, v = (
            y.view(batch, tokens, -1, self.head_dim).transpose(1, 2) for y in self.qkv(x).split(sizes, dim=-1)
        )
        q_cos, q_sin, k_cos, k_sin = cos[:tokens], sin[:tokens], cos[:tokens], sin[:tokens]
        if self.bug is Bug.KEY_POSITIONS_SHIFTED:
            k_cos, k_sin = cos[1 : tokens + 1], sin[1 : tokens + 1]
        q, k = _rotated(q, q_cos, q_sin), _rotated(k, k_cos, k_sin)
        k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
        v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = q @ k.transpose(-1, -2)
        scores = scores / (self.head_dim if self.bug is Bug.SCORES_OVER_HEAD_DIM else self.head_dim**0.5)
        query, key = torch.arange(tokens)[:, None], torch.arange(tokens)[None, :]
        allowed = key <= query
        if self.window is not None:
            window = self.window + 1 if self.bug is Bug.WINDOW_OFF_BY_ONE else self.window
            allowed = allowed & (query - key < window)
        allowed = allowed & mask.bool()[:, None, None, :]
        weights = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min).softmax(-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(batch, tokens, width))


class FeedForward(nn.Module):
    def __init__(self, width: int, inner: int):
        super().__init__()
        self.w1, self.w3 = nn.Linear(width, inner, bias=False), nn.Linear(width, inner, bias=False)
        self.w2 = nn.Linear(inner, width, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg, window: int | None, eps: float, bug: Bug):
        super().__init__()
        self.ln_1, self.ln_2 = RMSNorm(cfg.hidden_size, eps), RMSNorm(cfg.hidden_size, eps)
        self.attn = Attention(cfg, window, bug)
        self.ffn = FeedForward(cfg.hidden_size, cfg.intermediate_size)

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.ln_1(x), cos, sin, mask)
        return x + self.ffn(self.ln_2(x))


class QwenLM(nn.Module):
    def __init__(self, cfg, bug: Bug = Bug.NONE):
        super().__init__()
        eps = 1e-3 if bug is Bug.NORM_EPS else cfg.rms_norm_eps
        self.head_dim, self.theta = (
            cfg.hidden_size // cfg.num_attention_heads,
            cfg.rope_parameters["rope_theta"],
        )
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.blocks = nn.ModuleList(
            Block(cfg, cfg.sliding_window if kind == "sliding_attention" else None, eps, bug)
            for kind in cfg.layer_types
        )
        self.ln_f = RMSNorm(cfg.hidden_size, eps)
        self.head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids)
        cos, sin = rotary_tables(torch.arange(input_ids.shape[1] + 1), self.head_dim, self.theta)
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        for block in self.blocks:
            x = block(x, cos, sin, attention_mask)
        return self.head(self.ln_f(x))


def load_weights(model: QwenLM, state: dict, bug: Bug = Bug.NONE) -> QwenLM:
    """Copy a Qwen2ForCausalLM state dict into ``model``: renamed, q/k/v (and their biases) fused."""
    weights = {
        "embed.weight": state["model.embed_tokens.weight"],
        "ln_f.weight": state["model.norm.weight"],
        "head.weight": state["lm_head.weight"],
    }
    for index in range(len(model.blocks)):
        ours, theirs = f"blocks.{index}.", f"model.layers.{index}."
        attention = theirs + "self_attn."
        weights[ours + "ln_1.weight"] = state[theirs + "input_layernorm.weight"]
        weights[ours + "ln_2.weight"] = state[theirs + "post_attention_layernorm.weight"]
        for kind in ("weight", "bias") if bug is not Bug.NO_QKV_BIAS else ("weight",):
            weights[f"{ours}attn.qkv.{kind}"] = torch.cat(
                [state[f"{attention}{p}_proj.{kind}"] for p in "qkv"]
            )
        output = state[attention + "o_proj.weight"]
        weights[ours + "attn.proj.weight"] = output.T if bug is Bug.TRANSPOSED_OUTPUT_PROJECTION else output
        for name, their_name in (("w1", "gate_proj"), ("w3", "up_proj"), ("w2", "down_proj")):
            weights[f"{ours}ffn.{name}.weight"] = state[f"{theirs}mlp.{their_name}.weight"]
    model.load_state_dict(weights)
    return model


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> QwenLM:
    """The port with ``bug`` planted, its weights converted from the reference's."""
    if style is not Style.PLAIN:
        raise ValueError(f"the Qwen2 port has one style, not {style}")
    return load_weights(QwenLM(reference.config, bug), dict(reference.state_dict()), bug).eval()


def final_output(model: nn.Module, given: dict) -> torch.Tensor:
    """The logits, whichever model ``model`` is."""
    if isinstance(model, QwenLM):
        return model(**given)
    return model(**given).logits
