"""Multi-head latent attention and group-limited routing: transformers' DeepseekV3ForCausalLM, and a
port of it written by hand in plain PyTorch, as DeepSeek's own inference code writes it.

The reference (3 layers, layer 0 dense, layers 1-2 a mixture of experts) compresses queries through
``q_a_proj`` / ``q_a_layernorm`` / ``q_b_proj`` and keys/values through ``kv_a_proj_with_mqa`` (the
latent and one shared rope key) / ``kv_a_layernorm`` / ``kv_b_proj``, rotates the interleaved rope
dims (``rope_interleave``) with ``(cos, sin)`` made once in ``rotary_emb``, and scales the scores
by ``qk_head_dim ** -0.5``. Its router ``gate`` takes sigmoid scores, adds ``e_score_correction_bias``
for the choice only, keeps the ``topk_group`` best of ``n_group`` groups, renormalises the chosen
weights and multiplies them by ``routed_scaling_factor``; its ``experts`` hold two stacked 3D
weights, and ``shared_experts`` is an MLP run on every token.

:class:`DeepSeekLM` (``Style.PLAIN``, the only style): ``forward(input_ids, attention_mask)``, its own
names (``embed``, ``blocks.N.attn_norm / attn.wq_a / q_norm / wq_b / wkv_a / kv_norm / wkv_b / wo``,
``ffn_norm``, ``ffn`` (an ``MLP(w1, w2, w3)`` or an ``MoE(gate, experts.E, shared)``), ``norm``,
``head``), the rope as complex numbers (``freqs_cis``, made in its forward), the nope and rope parts
of a head concatenated by hand, a ``Gate`` module returning ``(weights, indices)``, one ``MLP``
module per expert called on its routed tokens, ``Block(x, freqs_cis, mask)`` given the ``[batch,
tokens]`` padding mask, making its causal mask itself. :func:`load_weights` converts the
reference's state dict (the stacked experts split, the correction bias copied).
"""

from __future__ import annotations

import enum

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, left_padded, randomize

STYLES = (Style.PLAIN,)


class Bug(str, enum.Enum):
    NONE = "none"
    SOFTMAX_SCORES = "the router's scores a softmax instead of a sigmoid"
    BIAS_IN_WEIGHTS = "the correction bias in the expert weights, not only in the choice"
    NO_ROUTED_SCALING = "the routed experts' weights not multiplied by routed_scaling_factor"
    NOT_RENORMALIZED = "the chosen experts' weights not renormalised (norm_topk_prob ignored)"
    NO_SHARED_EXPERT = "the shared expert left out"
    NO_GROUP_LIMIT = "the top-k chosen among every expert, not within the topk_group best groups"
    ROPE_ON_NOPE = "the query's rope applied to its first qk_rope_head_dim dims (the no-rope part)"
    NO_KV_NORM = "the compressed key/value latent not normed (kv_a_layernorm left out)"
    SCALE_HEAD_DIM = "the scores scaled by config.head_dim ** -0.5 (the rope dims), not qk_head_dim's"


def config():
    import transformers

    return transformers.DeepseekV3Config(
        vocab_size=99, hidden_size=32, intermediate_size=48, moe_intermediate_size=16, num_hidden_layers=3,
        first_k_dense_replace=1, n_routed_experts=8, num_experts_per_tok=2, n_group=4, topk_group=2,
        n_shared_experts=1, routed_scaling_factor=2.5, norm_topk_prob=True, num_attention_heads=4,
        num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16, qk_rope_head_dim=4, qk_nope_head_dim=8,
        v_head_dim=8, max_position_embeddings=64, rms_norm_eps=1e-6, tie_word_embeddings=False,
        bos_token_id=None, eos_token_id=None, pad_token_id=None,
    )  # fmt: skip


def reference():
    """A tiny DeepseekV3ForCausalLM with random parameters and a random correction bias."""
    import transformers

    torch.manual_seed(0)
    model = randomize(transformers.DeepseekV3ForCausalLM(config()), scale=0.3)
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for layer in model.model.layers[1:]:
            bias = layer.mlp.gate.e_score_correction_bias
            bias.copy_(torch.randn(bias.shape, generator=generator) * 0.3)
    return model


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


def precompute_freqs_cis(tokens: int, dim: int, theta: float) -> torch.Tensor:
    frequencies = 1.0 / theta ** (torch.arange(0, dim, 2).float() / dim)
    return torch.polar(torch.ones(tokens, dim // 2), torch.outer(torch.arange(tokens).float(), frequencies))


def apply_rotary_emb(x: torch.Tensor, freqs_cis: torch.Tensor) -> torch.Tensor:
    """``x`` ``[batch, tokens, heads, dim]`` rotated pair by pair (``(x0, x1), (x2, x3), ...``)."""
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(pairs * freqs_cis[None, :, None, :]).flatten(3).to(x.dtype)


class MLA(nn.Module):
    def __init__(self, cfg, bug: Bug):
        super().__init__()
        self.heads, self.bug = cfg.num_attention_heads, bug
        self.nope, self.rope, self.v_dim = cfg.qk_nope_head_dim, cfg.qk_rope_head_dim, cfg.v_head_dim
        self.kv_rank = cfg.kv_lora_rank
        head_dim = cfg.head_dim if bug is Bug.SCALE_HEAD_DIM else self.nope + self.rope
        self.softmax_scale = head_dim**-0.5
        self.wq_a = nn.Linear(cfg.hidden_size, cfg.q_lora_rank, bias=False)
        self.q_norm = RMSNorm(cfg.q_lora_rank, 1e-6)
        self.wq_b = nn.Linear(cfg.q_lora_rank, self.heads * (self.nope + self.rope), bias=False)
        self.wkv_a = nn.Linear(cfg.hidden_size, self.kv_rank + self.rope, bias=False)
        self.kv_norm = RMSNorm(self.kv_rank, 1e-6)
        self.wkv_b = nn.Linear(self.kv_rank, self.heads * (self.nope + self.v_dim), bias=False)
        self.wo = nn.Linear(self.heads * self.v_dim, cfg.hidden_size, bias=False)

    def forward(self, x, freqs_cis, mask):
        batch, tokens, _ = x.shape
        q = self.wq_b(self.q_norm(self.wq_a(x))).view(batch, tokens, self.heads, -1)
        if self.bug is Bug.ROPE_ON_NOPE:
            q_pe, q_nope = q.split([self.rope, self.nope], dim=-1)
        else:
            q_nope, q_pe = q.split([self.nope, self.rope], dim=-1)
        q = torch.cat([q_nope, apply_rotary_emb(q_pe, freqs_cis)], dim=-1)
        kv, k_pe = self.wkv_a(x).split([self.kv_rank, self.rope], dim=-1)
        k_pe = apply_rotary_emb(k_pe.unsqueeze(2), freqs_cis)
        kv = self.wkv_b(kv if self.bug is Bug.NO_KV_NORM else self.kv_norm(kv))
        k_nope, v = kv.view(batch, tokens, self.heads, -1).split([self.nope, self.v_dim], dim=-1)
        k = torch.cat([k_nope, k_pe.expand(-1, -1, self.heads, -1)], dim=-1)
        scores = torch.einsum("bshd,bthd->bsht", q, k) * self.softmax_scale
        scores = scores.masked_fill(~mask[:, :, None, :], torch.finfo(scores.dtype).min).softmax(-1)
        return self.wo(torch.einsum("bsht,bthd->bshd", scores, v).flatten(2))


class MLP(nn.Module):
    def __init__(self, width: int, inner: int):
        super().__init__()
        self.w1, self.w3 = nn.Linear(width, inner, bias=False), nn.Linear(width, inner, bias=False)
        self.w2 = nn.Linear(inner, width, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Gate(nn.Module):
    def __init__(self, cfg, bug: Bug):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(cfg.n_routed_experts, cfg.hidden_size))
        self.bias = nn.Parameter(torch.empty(cfg.n_routed_experts))
        self.topk, self.groups, self.topk_groups = cfg.num_experts_per_tok, cfg.n_group, cfg.topk_group
        self.route_scale, self.bug = cfg.routed_scaling_factor, bug

    def forward(self, x):
        scores = F.linear(x, self.weight)
        scores = scores.softmax(-1) if self.bug is Bug.SOFTMAX_SCORES else scores.sigmoid()
        original_scores = scores
        scores = scores + self.bias
        if self.bug is not Bug.NO_GROUP_LIMIT:
            scores = scores.view(x.size(0), self.groups, -1)
            group_scores = scores.topk(2, dim=-1)[0].sum(dim=-1)
            chosen_groups = group_scores.topk(self.topk_groups, dim=-1)[1]
            mask = scores.new_ones(x.size(0), self.groups, dtype=torch.bool).scatter_(1, chosen_groups, False)
            scores = scores.masked_fill(mask.unsqueeze(-1), float("-inf")).flatten(1)
        indices = torch.topk(scores, self.topk, dim=-1)[1]
        weights = (scores if self.bug is Bug.BIAS_IN_WEIGHTS else original_scores).gather(1, indices)
        if self.bug is not Bug.NOT_RENORMALIZED:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        if self.bug is not Bug.NO_ROUTED_SCALING:
            weights = weights * self.route_scale
        return weights, indices


class MoE(nn.Module):
    def __init__(self, cfg, bug: Bug):
        super().__init__()
        self.gate = Gate(cfg, bug)
        width, inner = cfg.hidden_size, cfg.moe_intermediate_size
        self.experts = nn.ModuleList(MLP(width, inner) for _ in range(cfg.n_routed_experts))
        self.shared = MLP(width, inner * cfg.n_shared_experts)
        self.bug = bug

    def forward(self, x):
        shape = x.shape
        x = x.view(-1, shape[-1])
        weights, indices = self.gate(x)
        y = torch.zeros_like(x)
        for number, expert in enumerate(self.experts):
            rows, nth = torch.where(indices == number)
            if rows.numel():
                y[rows] += expert(x[rows]) * weights[rows, nth, None]
        if self.bug is not Bug.NO_SHARED_EXPERT:
            y = y + self.shared(x)
        return y.view(shape)


class Block(nn.Module):
    def __init__(self, cfg, index: int, bug: Bug):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.attn = MLA(cfg, bug)
        self.ffn_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        dense = index < cfg.first_k_dense_replace
        self.ffn = MLP(cfg.hidden_size, cfg.intermediate_size) if dense else MoE(cfg, bug)

    def forward(self, x, freqs_cis, mask):
        x = x + self.attn(self.attn_norm(x), freqs_cis, mask)
        return x + self.ffn(self.ffn_norm(x))


class DeepSeekLM(nn.Module):
    def __init__(self, cfg, bug: Bug = Bug.NONE):
        super().__init__()
        self.rope_dim, self.theta = cfg.qk_rope_head_dim, cfg.rope_parameters["rope_theta"]
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.blocks = nn.ModuleList(Block(cfg, index, bug) for index in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def forward(self, input_ids, attention_mask):
        tokens = input_ids.shape[1]
        freqs_cis = precompute_freqs_cis(tokens, self.rope_dim, self.theta)
        causal = torch.ones(tokens, tokens, dtype=torch.bool).tril()
        mask = causal[None] & attention_mask.bool()[:, None, :]
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, freqs_cis, mask)
        return self.head(self.norm(x))


def load_weights(model: DeepSeekLM, state: dict) -> DeepSeekLM:
    """Copy a DeepseekV3ForCausalLM state dict into ``model``: renamed, the stacked experts split."""
    weights = {
        "embed.weight": state["model.embed_tokens.weight"],
        "norm.weight": state["model.norm.weight"],
        "head.weight": state["lm_head.weight"],
    }
    names = {
        "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm", "attn.wq_a": "self_attn.q_a_proj",
        "attn.q_norm": "self_attn.q_a_layernorm", "attn.wq_b": "self_attn.q_b_proj",
        "attn.wkv_a": "self_attn.kv_a_proj_with_mqa", "attn.kv_norm": "self_attn.kv_a_layernorm",
        "attn.wkv_b": "self_attn.kv_b_proj", "attn.wo": "self_attn.o_proj",
    }  # fmt: skip
    for index, block in enumerate(model.blocks):
        ours, theirs = f"blocks.{index}.", f"model.layers.{index}."
        for our_name, their_name in names.items():
            weights[f"{ours}{our_name}.weight"] = state[f"{theirs}{their_name}.weight"]
        mlps = {"": "mlp."}
        if isinstance(block.ffn, MoE):
            weights[ours + "ffn.gate.weight"] = state[theirs + "mlp.gate.weight"]
            weights[ours + "ffn.gate.bias"] = state[theirs + "mlp.gate.e_score_correction_bias"]
            mlps = {"shared.": "mlp.shared_experts."}
            gate_up, down = (
                state[theirs + "mlp.experts.gate_up_proj"],
                state[theirs + "mlp.experts.down_proj"],
            )
            for expert in range(len(block.ffn.experts)):
                w1, w3 = gate_up[expert].chunk(2)
                for name, weight in (("w1", w1), ("w3", w3), ("w2", down[expert])):
                    weights[f"{ours}ffn.experts.{expert}.{name}.weight"] = weight
        for our_mlp, their_mlp in mlps.items():
            for name, their_name in (("w1", "gate_proj"), ("w3", "up_proj"), ("w2", "down_proj")):
                weights[f"{ours}ffn.{our_mlp}{name}.weight"] = state[
                    f"{theirs}{their_mlp}{their_name}.weight"
                ]
    model.load_state_dict(weights)
    return model


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> DeepSeekLM:
    """The port with ``bug`` planted, its weights converted from the reference's."""
    if style is not Style.PLAIN:
        raise ValueError(f"the DeepSeek-V3 port has one style, not {style}")
    return load_weights(DeepSeekLM(reference.config, bug), dict(reference.state_dict())).eval()


def final_output(model: nn.Module, given: dict) -> torch.Tensor:
    """The logits, whichever model ``model`` is."""
    if isinstance(model, DeepSeekLM):
        return model(**given)
    return model(**given).logits
