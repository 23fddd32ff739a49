"""A second Mixtral port, as a porter writes a first version: the router a module of its own (a
``weight``, no submodule) returning ``(weights, indices)`` of the chosen experts, where the
reference's ``gate`` returns ``(logits, weights, indices)``; one ``Expert`` per expert with a fused
``w13`` (gate and up) projection; ``embed``, ``layers`` (``attn_norm``, ``attn``, ``moe_norm``,
``moe``), ``norm``, ``lm_head``. The reference is :func:`tests.ports.mixtral.reference`; the
attention and norms are :mod:`tests.ports.mixtral`'s.
"""

from __future__ import annotations

import enum

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style
from tests.ports.mixtral import CONFIG, Attention, RMSNorm, final_output, inputs, reference

__all__ = ["Bug", "STYLES", "final_output", "inputs", "port", "reference"]
STYLES = (Style.PLAIN,)
BUGGY_LAYER = 1


class Bug(str, enum.Enum):
    NONE = "none"
    SOFTMAX_BEFORE_TOP_K = "the router's weights: top-k of the softmax over every expert, not renormalised"
    SWAPPED_GATE_AND_UP = "the halves of one layer's fused w13 swapped by the conversion"


class TopKRouter(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(CONFIG["num_local_experts"], CONFIG["hidden_size"]))
        self.bug = bug

    def forward(self, x):
        logits = F.linear(x, self.weight)
        if self.bug is Bug.SOFTMAX_BEFORE_TOP_K:
            return torch.topk(logits.softmax(-1), CONFIG["num_experts_per_tok"], dim=-1)
        top, chosen = torch.topk(logits, CONFIG["num_experts_per_tok"], dim=-1)
        return top.softmax(-1), chosen


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.w13 = nn.Linear(CONFIG["hidden_size"], 2 * CONFIG["intermediate_size"], bias=False)
        self.w2 = nn.Linear(CONFIG["intermediate_size"], CONFIG["hidden_size"], bias=False)

    def forward(self, x):
        gate, up = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(gate) * up)


class MoE(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.router = TopKRouter(bug)
        self.experts = nn.ModuleList(Expert() for _ in range(CONFIG["num_local_experts"]))

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        weights, chosen = self.router(tokens)
        out = torch.zeros_like(tokens)
        for number, expert in enumerate(self.experts):
            rows, slot = torch.where(chosen == number)
            if len(rows):
                out.index_add_(0, rows, weights[rows, slot, None] * expert(tokens[rows]))
        return out.view_as(x)


class Layer(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(CONFIG["hidden_size"]), Attention()
        self.moe_norm, self.moe = RMSNorm(CONFIG["hidden_size"]), MoE(bug)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.moe(self.moe_norm(x))


class Mixtral(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.embed = nn.Embedding(CONFIG["vocab_size"], CONFIG["hidden_size"])
        self.layers = nn.ModuleList(Layer(bug) for _ in range(CONFIG["num_hidden_layers"]))
        self.norm = RMSNorm(CONFIG["hidden_size"])
        self.lm_head = nn.Linear(CONFIG["hidden_size"], CONFIG["vocab_size"], bias=False)

    def forward(self, input_ids):
        head_dim = CONFIG["hidden_size"] // CONFIG["num_attention_heads"]
        frequencies = 1.0 / CONFIG["rope_theta"] ** (torch.arange(0, head_dim, 2).float() / head_dim)
        angles = torch.outer(torch.arange(input_ids.shape[1]).float(), frequencies)
        angles = torch.cat([angles, angles], dim=-1)
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, angles.cos(), angles.sin())
        return self.lm_head(self.norm(x))


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> nn.Module:
    """The port with the reference's weights, by a conversion map (the stacked experts split)."""
    state, size = reference.state_dict(), CONFIG["intermediate_size"]
    weights = {
        "embed.weight": state["model.embed_tokens.weight"],
        "norm.weight": state["model.norm.weight"],
        "lm_head.weight": state["lm_head.weight"],
    }
    for number in range(CONFIG["num_hidden_layers"]):
        ours, theirs = f"layers.{number}.", f"model.layers.{number}."
        for mine, name in (("wq", "q_proj"), ("wk", "k_proj"), ("wv", "v_proj"), ("wo", "o_proj")):
            weights[f"{ours}attn.{mine}.weight"] = state[f"{theirs}self_attn.{name}.weight"]
        weights[f"{ours}attn_norm.weight"] = state[f"{theirs}input_layernorm.weight"]
        weights[f"{ours}moe_norm.weight"] = state[f"{theirs}post_attention_layernorm.weight"]
        weights[f"{ours}moe.router.weight"] = state[f"{theirs}mlp.gate.weight"]
        for expert in range(CONFIG["num_local_experts"]):
            gate_up = state[f"{theirs}mlp.experts.gate_up_proj"][expert]
            if bug is Bug.SWAPPED_GATE_AND_UP and number == BUGGY_LAYER:
                gate_up = torch.cat([gate_up[size:], gate_up[:size]])
            weights[f"{ours}moe.experts.{expert}.w13.weight"] = gate_up
            weights[f"{ours}moe.experts.{expert}.w2.weight"] = state[f"{theirs}mlp.experts.down_proj"][expert]
    model = Mixtral(bug)
    model.load_state_dict(weights)
    return model.eval()
