"""An encoder: transformers' DistilBertModel, and a port of it written by hand in plain PyTorch.

The reference turns the ``[batch, tokens]`` padding mask into a 4-D boolean mask once, in its
``transformer``, and passes it to every layer and attention; its feed-forward is an ``ffn`` module
with a ``GELUActivation`` module.

:class:`Port` (``Style.PLAIN``, the only style): ``forward(input_ids, attention_mask)``, its own
names (``tok``, ``pos``, ``norm``, ``blocks.N.attn.q / k / v / o``, ``norm1``, ``fc1``, ``fc2``,
``norm2``), ``Block(x, mask)`` and ``Attention(x, mask)`` taking the padding mask as it is, positions
embedded from ``arange(tokens)`` (``[10]`` where the reference's are ``[1, 10]``), ``F.gelu`` where the
reference has an activation module, and no ``embeddings``, ``transformer`` or ``ffn`` module.
"""

from __future__ import annotations

import enum
import math

import torch
from torch import nn

from tests.ports import Style

STYLES = (Style.PLAIN,)


class Bug(str, enum.Enum):
    NONE = "none"
    NO_ATTENTION_SCALING = "the queries not divided by sqrt(head_dim)"
    RELU_FOR_GELU = "the feed-forward through ReLU instead of GELU"


def reference():
    """A tiny DistilBertModel (its default initialization)."""
    import transformers

    config = transformers.DistilBertConfig(
        vocab_size=99, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64
    )
    torch.manual_seed(0)
    return transformers.DistilBertModel(config).eval()


def inputs() -> dict:
    """``input_ids`` ``[2, 10]`` and an ``attention_mask`` padding the second sequence's last three tokens."""
    input_ids = torch.randint(0, 99, (2, 10), generator=torch.Generator().manual_seed(1))
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, 7:] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask}


class Attention(nn.Module):
    def __init__(self, width, heads, bug: Bug):
        super().__init__()
        self.heads, self.bug = heads, bug
        self.q, self.k, self.v, self.o = (nn.Linear(width, width) for _ in range(4))

    def forward(self, x, mask):
        batch, tokens, width = x.shape

        def split(y):
            return y.view(batch, tokens, self.heads, -1).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        if self.bug is not Bug.NO_ATTENTION_SCALING:
            q = q / math.sqrt(width // self.heads)
        weights = (q @ k.transpose(-1, -2)).masked_fill(mask[:, None, None, :] == 0, torch.finfo(q.dtype).min)
        return self.o((weights.softmax(-1) @ v).transpose(1, 2).reshape(batch, tokens, width))


class Block(nn.Module):
    def __init__(self, config, bug: Bug):
        super().__init__()
        self.attn = Attention(config.dim, config.n_heads, bug)
        self.norm1 = nn.LayerNorm(config.dim, eps=1e-12)
        self.fc1, self.fc2 = (
            nn.Linear(config.dim, config.hidden_dim),
            nn.Linear(config.hidden_dim, config.dim),
        )
        self.norm2 = nn.LayerNorm(config.dim, eps=1e-12)
        self.activation = nn.functional.relu if bug is Bug.RELU_FOR_GELU else nn.functional.gelu

    def forward(self, x, mask):
        x = self.norm1(x + self.attn(x, mask))
        return self.norm2(x + self.fc2(self.activation(self.fc1(x))))


class Port(nn.Module):
    def __init__(self, config, bug: Bug = Bug.NONE):
        super().__init__()
        self.tok = nn.Embedding(config.vocab_size, config.dim)
        self.pos = nn.Embedding(config.max_position_embeddings, config.dim)
        self.norm = nn.LayerNorm(config.dim, eps=1e-12)
        self.blocks = nn.ModuleList(Block(config, bug) for _ in range(config.n_layers))

    def forward(self, input_ids, attention_mask):
        x = self.norm(self.tok(input_ids) + self.pos(torch.arange(input_ids.shape[1])))
        for block in self.blocks:
            x = block(x, attention_mask)
        return x


_NAMES = {"tok": "embeddings.word_embeddings", "pos": "embeddings.position_embeddings"}
_NAMES |= {"norm": "embeddings.LayerNorm"}
_BLOCK_NAMES = {"attn.q": "attention.q_lin", "attn.k": "attention.k_lin", "attn.v": "attention.v_lin"}
_BLOCK_NAMES |= {"attn.o": "attention.out_lin", "norm1": "sa_layer_norm", "norm2": "output_layer_norm"}
_BLOCK_NAMES |= {"fc1": "ffn.lin1", "fc2": "ffn.lin2"}


def _reference_name(name: str) -> str:
    module, _, parameter = name.rpartition(".")
    if module.startswith("blocks."):
        _, index, inner = module.split(".", 2)
        return f"transformer.layer.{index}.{_BLOCK_NAMES[inner]}.{parameter}"
    return f"{_NAMES[module]}.{parameter}"


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> Port:
    """The port with ``bug`` planted, its weights converted from the reference's."""
    if style is not Style.PLAIN:
        raise ValueError(f"the DistilBERT port has one style, not {style}")
    model = Port(reference.config, bug)
    weights = reference.state_dict()
    model.load_state_dict({name: weights[_reference_name(name)] for name in model.state_dict()})
    return model.eval()


def final_output(model: nn.Module, given: dict) -> torch.Tensor:
    """The last hidden states, whichever model ``model`` is."""
    if isinstance(model, Port):
        return model(**given)
    return model(**given).last_hidden_state
