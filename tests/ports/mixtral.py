"""A mixture of experts: transformers' MixtralForCausalLM, and a port written the way mistral's own
reference code is.

The reference routes each token through a ``gate`` module returning (logits, top-k weights, top-k
indices), softmax over every expert then renormalised over the chosen ones, and runs its experts
from two stacked 3D weights (``gate_up_proj``, ``down_proj``) in one ``experts`` module. The port:
``gate`` a plain ``nn.Linear`` returning the logits, softmax over the chosen experts' logits (the
same weights), and one ``FeedForward(w1, w2, w3)`` module per expert, called on the tokens routed to
it; ``tok_embeddings``, ``layers``, ``attention`` (``wq``...), ``feed_forward``, ``norm``,
``output``. Its calls inside the router and the experts have no counterpart in the reference's, so
what happens there is seen only at the end of the layer.

``Style.PLAIN`` calls each block ``Block(x, cos, sin)``; ``Style.KEYWORDS`` calls it with
transformers' keywords (``hidden_states=``, ``position_embeddings=``). Bugs are in every layer.
"""

from __future__ import annotations

import enum
import math

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

CONFIG = dict(
    vocab_size=99, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, rms_norm_eps=1e-5, rope_theta=1e6,
    bos_token_id=None, eos_token_id=None, pad_token_id=None,
)  # fmt: skip


class Bug(str, enum.Enum):
    NONE = "none"
    ROUTER_NOT_RENORMALIZED = "top-k weights taken from the softmax over every expert, not renormalised"
    SWAPPED_GATE_AND_UP = "each expert applies SiLU to its up projection instead of its gate"


def reference():
    """A tiny MixtralForCausalLM with random parameters (eager attention)."""
    import transformers

    config = transformers.MixtralConfig(**CONFIG, attn_implementation="eager")
    torch.manual_seed(0)
    return randomize(transformers.MixtralForCausalLM(config), scale=0.3)


def inputs(batch: int = 2, tokens: int = 9) -> torch.Tensor:
    """``input_ids`` of shape ``[batch, tokens]``."""
    return torch.randint(0, CONFIG["vocab_size"], (batch, tokens), generator=torch.Generator().manual_seed(1))


def final_output(model: nn.Module, input_ids: torch.Tensor) -> torch.Tensor:
    output = model(input_ids)
    return output if isinstance(output, torch.Tensor) else output.logits


class RMSNorm(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + CONFIG["rms_norm_eps"]) * self.weight


def _rope(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads, self.kv_heads = CONFIG["num_attention_heads"], CONFIG["num_key_value_heads"]
        self.head_dim = CONFIG["hidden_size"] // self.heads
        self.wq = nn.Linear(CONFIG["hidden_size"], self.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(CONFIG["hidden_size"], self.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(CONFIG["hidden_size"], self.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.heads * self.head_dim, CONFIG["hidden_size"], bias=False)

    def forward(self, x, cos, sin):
        batch, tokens, _ = x.shape
        q = self.wq(x).view(batch, tokens, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(batch, tokens, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(batch, tokens, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        repeat = self.heads // self.kv_heads
        k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        mask = torch.full((tokens, tokens), float("-inf")).triu(1)
        scores = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + mask, dim=-1)
        return self.wo((scores @ v).transpose(1, 2).reshape(batch, tokens, -1))


class FeedForward(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.w1 = nn.Linear(CONFIG["hidden_size"], CONFIG["intermediate_size"], bias=False)
        self.w2 = nn.Linear(CONFIG["intermediate_size"], CONFIG["hidden_size"], bias=False)
        self.w3 = nn.Linear(CONFIG["hidden_size"], CONFIG["intermediate_size"], bias=False)
        self.bug = bug

    def forward(self, x):
        if self.bug is Bug.SWAPPED_GATE_AND_UP:
            return self.w2(F.silu(self.w3(x)) * self.w1(x))
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoeLayer(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.gate = nn.Linear(CONFIG["hidden_size"], CONFIG["num_local_experts"], bias=False)
        self.experts = nn.ModuleList(FeedForward(bug) for _ in range(CONFIG["num_local_experts"]))
        self.bug = bug

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        logits = self.gate(tokens)
        if self.bug is Bug.ROUTER_NOT_RENORMALIZED:
            weights, chosen = torch.topk(torch.softmax(logits, dim=-1), CONFIG["num_experts_per_tok"])
        else:
            weights, chosen = torch.topk(logits, CONFIG["num_experts_per_tok"])
            weights = torch.softmax(weights, dim=-1)
        out = torch.zeros_like(tokens)
        for number, expert in enumerate(self.experts):
            rows, nth = torch.where(chosen == number)
            if rows.numel():
                out[rows] += weights[rows, nth, None] * expert(tokens[rows])
        return out.reshape(x.shape)


class Block(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        self.attention, self.feed_forward = Attention(), MoeLayer(bug)
        self.attention_norm, self.ffn_norm = RMSNorm(CONFIG["hidden_size"]), RMSNorm(CONFIG["hidden_size"])

    def forward(self, x, cos, sin):
        h = x + self.attention(self.attention_norm(x), cos, sin)
        return h + self.feed_forward(self.ffn_norm(h))


class KeywordBlock(Block):
    def forward(self, hidden_states, position_embeddings):
        return super().forward(hidden_states, *position_embeddings)


class Mixtral(nn.Module):
    def __init__(self, style: Style, bug: Bug):
        super().__init__()
        block = KeywordBlock if style is Style.KEYWORDS else Block
        self.style = style
        self.tok_embeddings = nn.Embedding(CONFIG["vocab_size"], CONFIG["hidden_size"])
        self.layers = nn.ModuleList(block(bug) for _ in range(CONFIG["num_hidden_layers"]))
        self.norm = RMSNorm(CONFIG["hidden_size"])
        self.output = nn.Linear(CONFIG["hidden_size"], CONFIG["vocab_size"], bias=False)

    def forward(self, input_ids):
        head_dim = CONFIG["hidden_size"] // CONFIG["num_attention_heads"]
        frequencies = 1.0 / CONFIG["rope_theta"] ** (torch.arange(0, head_dim, 2).float() / head_dim)
        angles = torch.outer(torch.arange(input_ids.shape[1]).float(), frequencies).repeat(1, 2)
        cos, sin = angles.cos(), angles.sin()
        x = self.tok_embeddings(input_ids)
        for layer in self.layers:
            if self.style is Style.KEYWORDS:
                x = layer(hidden_states=x, position_embeddings=(cos, sin))
            else:
                x = layer(x, cos, sin)
        return self.output(self.norm(x))


def port(reference: nn.Module, style: Style, bug: Bug = Bug.NONE) -> nn.Module:
    """The port with the reference's weights: the experts' stacked weights split per expert."""
    model = Mixtral(style, bug)
    state, size = reference.state_dict(), CONFIG["intermediate_size"]
    with torch.no_grad():
        model.tok_embeddings.weight.copy_(state["model.embed_tokens.weight"])
        model.norm.weight.copy_(state["model.norm.weight"])
        model.output.weight.copy_(state["lm_head.weight"])
        for number, layer in enumerate(model.layers):
            prefix = f"model.layers.{number}."
            for ours, theirs in (("wq", "q_proj"), ("wk", "k_proj"), ("wv", "v_proj"), ("wo", "o_proj")):
                getattr(layer.attention, ours).weight.copy_(state[f"{prefix}self_attn.{theirs}.weight"])
            layer.attention_norm.weight.copy_(state[f"{prefix}input_layernorm.weight"])
            layer.ffn_norm.weight.copy_(state[f"{prefix}post_attention_layernorm.weight"])
            layer.feed_forward.gate.weight.copy_(state[f"{prefix}mlp.gate.weight"])
            for expert, weights in enumerate(layer.feed_forward.experts):
                gate_up = state[f"{prefix}mlp.experts.gate_up_proj"][expert]
                weights.w1.weight.copy_(gate_up[:size])
                weights.w3.weight.copy_(gate_up[size:])
                weights.w2.weight.copy_(state[f"{prefix}mlp.experts.down_proj"][expert])
    return model.eval()
