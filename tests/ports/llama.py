"""A decoder: transformers' LlamaModel, and a port of it written by hand in plain PyTorch.

The reference (SDPA attention, transformers' default) computes ``(cos, sin)`` once in ``rotary_emb``
and passes them down as ``position_embeddings``, builds a 4-D boolean mask only when the batch is
padded (``attention_mask=None`` otherwise: SDPA masks causally by itself), and counts positions from
0 in every sequence.

:class:`Port` (``Style.PLAIN``, the only style) is written as a porter writes it: ``forward(input_ids,
attention_mask)``, its own names (``embed``, ``blocks.N.norm1 / attn.q / k / v / o / norm2 / gate /
up / down``), ``Block(x, cos, sin, mask)`` and ``Attention(x, cos, sin, mask)`` taking the
``[batch, tokens]`` padding mask and making the causal mask themselves, rotary tables of shape
``[batch, 1, tokens, head_dim]`` whose positions are counted from each sequence's first real token
(left padding shifts them; attention depends on relative positions only), ``F.silu`` where the
reference has an activation module, and no ``rotary_emb`` or ``mlp`` module.
"""

from __future__ import annotations

import enum
import math

import torch
from torch import nn

from tests.ports import Style, left_padded

STYLES = (Style.PLAIN,)


class Bug(str, enum.Enum):
    NONE = "none"
    ATTENTION_OUTPUT_HALVED = "every attention halves what o_proj returns"
    NO_ATTENTION_SCALING = "attention scores not divided by sqrt(head_dim)"
    GELU_FOR_SILU = "the feed-forward gate through GELU instead of SiLU"


def config():
    import transformers

    return transformers.LlamaConfig(
        vocab_size=99, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=4, max_position_embeddings=64,
    )  # fmt: skip


def reference():
    """A tiny LlamaModel (its default initialization, SDPA attention)."""
    import transformers

    torch.manual_seed(0)
    return transformers.LlamaModel(config()).eval()


def inputs(left_padding: int = 0) -> dict:
    """``input_ids`` ``[2, 10]``, left-padded by ``left_padding`` tokens (see :func:`left_padded`)."""
    return left_padded(
        torch.randint(0, 99, (2, 10), generator=torch.Generator().manual_seed(1)), left_padding
    )


class Norm(nn.Module):
    def __init__(self, width, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(width)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def _rotated(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin


class Attention(nn.Module):
    def __init__(self, config, bug: Bug):
        super().__init__()
        width, self.heads, self.bug = config.hidden_size, config.num_attention_heads, bug
        self.q, self.k, self.v, self.o = (nn.Linear(width, width, bias=False) for _ in range(4))
        self.output_scale = 0.5 if bug is Bug.ATTENTION_OUTPUT_HALVED else 1.0

    def forward(self, x, cos, sin, mask):
        batch, tokens, width = x.shape

        def split(y):
            return y.view(batch, tokens, self.heads, -1).transpose(1, 2)

        q, k, v = _rotated(split(self.q(x)), cos, sin), _rotated(split(self.k(x)), cos, sin), split(self.v(x))
        allowed = torch.ones(tokens, tokens, dtype=torch.bool).tril() & mask.bool()[:, None, None, :]
        scores = q @ k.transpose(-1, -2)
        if self.bug is not Bug.NO_ATTENTION_SCALING:
            scores = scores / math.sqrt(q.shape[-1])
        weights = scores.masked_fill(~allowed, torch.finfo(q.dtype).min).softmax(-1)
        output = self.o((weights @ v).transpose(1, 2).reshape(batch, tokens, width))
        return output if self.output_scale == 1.0 else output * self.output_scale


class Block(nn.Module):
    def __init__(self, config, bug: Bug):
        super().__init__()
        width, inner, eps = config.hidden_size, config.intermediate_size, config.rms_norm_eps
        self.norm1, self.norm2 = Norm(width, eps), Norm(width, eps)
        self.attn = Attention(config, bug)
        self.gate, self.up = nn.Linear(width, inner, bias=False), nn.Linear(width, inner, bias=False)
        self.down = nn.Linear(inner, width, bias=False)
        self.activation = nn.functional.gelu if bug is Bug.GELU_FOR_SILU else nn.functional.silu

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.norm1(x), cos, sin, mask)
        normed = self.norm2(x)
        return x + self.down(self.activation(self.gate(normed)) * self.up(normed))


class Port(nn.Module):
    def __init__(self, config, bug: Bug = Bug.NONE):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.blocks = nn.ModuleList(Block(config, bug) for _ in range(config.num_hidden_layers))
        self.norm = Norm(config.hidden_size, config.rms_norm_eps)

    def forward(self, input_ids, attention_mask):
        head = self.config.hidden_size // self.config.num_attention_heads
        positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        inverse = 1.0 / (
            self.config.rope_parameters["rope_theta"] ** (torch.arange(0, head, 2).float() / head)
        )
        angles = positions[..., None].float() * inverse
        angles = torch.cat((angles, angles), -1)[:, None]
        x = self.embed(input_ids)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        for block in self.blocks:
            x = block(x, cos, sin, attention_mask)
        return self.norm(x)


_NAMES = {"norm1": "input_layernorm", "norm2": "post_attention_layernorm", "attn.q": "self_attn.q_proj"}
_NAMES |= {"attn.k": "self_attn.k_proj", "attn.v": "self_attn.v_proj", "attn.o": "self_attn.o_proj"}
_NAMES |= {"gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}


def _reference_name(name: str) -> str:
    if name.startswith("blocks."):
        _, index, rest = name.split(".", 2)
        module, _, parameter = rest.rpartition(".")
        return f"layers.{index}.{_NAMES[module]}.{parameter}"
    return {"embed.weight": "embed_tokens.weight", "norm.weight": "norm.weight"}[name]


def port(
    reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE, attention_output_scale: float = 1.0
) -> Port:
    """The port with ``bug`` planted, its weights converted from the reference's; every attention
    multiplies what o_proj returns by ``attention_output_scale`` (a bug of a few percent at 0.97)."""
    if style is not Style.PLAIN:
        raise ValueError(f"the Llama port has one style, not {style}")
    model = Port(reference.config, bug)
    for block in model.blocks:
        block.attn.output_scale *= attention_output_scale
    weights = reference.state_dict()
    model.load_state_dict({name: weights[_reference_name(name)] for name in model.state_dict()})
    return model.eval()


def final_output(model: nn.Module, given: dict) -> torch.Tensor:
    """The last hidden states, whichever model ``model`` is."""
    if isinstance(model, Port):
        return model(**given)
    return model(**given).last_hidden_state
