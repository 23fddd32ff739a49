"""GPT-2 ported with blocks that take the padding mask: ``Block(x, mask)``, its reference's blocks called
positionally.

transformers' GPT2LMHeadModel (SDPA attention, its default) calls each block as ``block(hidden_states,
past_key_values, cache_position, attention_mask, ...)``, with ``attention_mask=None`` when the batch
pads nothing. :class:`GPT` (``Style.PLAIN``) is written as a porter writes it in plain PyTorch: ``tok``,
``pos``, ``blocks.N.norm1 / attn.qkv / attn.out / norm2 / up / down``, ``norm``, ``head``,
``forward(input_ids, attention_mask)`` passing the ``[batch, tokens]`` mask to every block, which makes
the causal mask itself. Weights are converted by name, every Conv1D weight transposed.
"""

from __future__ import annotations

import enum
import math

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, gpt2, left_padded, randomize

STYLES = (Style.PLAIN,)


class Bug(str, enum.Enum):
    NONE = "none"
    ATTENTION_OUTPUT_HALVED = "every attention halves what its output projection returns"


def reference():
    """A tiny GPT2LMHeadModel with random parameters (SDPA attention)."""
    import transformers

    torch.manual_seed(0)
    return randomize(transformers.GPT2LMHeadModel(transformers.GPT2Config(**gpt2.CONFIG)))


def inputs(left_padding: int = 0) -> dict:
    """``input_ids`` ``[2, 8]``, left-padded by ``left_padding`` tokens (see :func:`left_padded`)."""
    return left_padded(gpt2.inputs(), left_padding)


class Attention(nn.Module):
    def __init__(self, width: int, heads: int, bug: Bug):
        super().__init__()
        self.heads, self.bug = heads, bug
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x, mask):
        batch, tokens, width = x.shape
        q, k, v = (
            y.view(batch, tokens, self.heads, width // self.heads).transpose(1, 2)
            for y in self.qkv(x).split(width, dim=-1)
        )
        scores = q @ k.transpose(-1, -2) / math.sqrt(width // self.heads)
        keep = torch.ones(tokens, tokens, dtype=torch.bool).tril()[None, None] & mask[:, None, None, :].bool()
        weights = scores.masked_fill(~keep, torch.finfo(scores.dtype).min).softmax(-1)
        y = self.out((weights @ v).transpose(1, 2).reshape(batch, tokens, width))
        return y * 0.5 if self.bug is Bug.ATTENTION_OUTPUT_HALVED else y


class Block(nn.Module):
    def __init__(self, width: int, heads: int, bug: Bug):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = Attention(width, heads, bug)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x, mask):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, bug: Bug = Bug.NONE):
        super().__init__()
        width, config = gpt2.CONFIG["n_embd"], gpt2.CONFIG
        self.tok = nn.Embedding(config["vocab_size"], width)
        self.pos = nn.Embedding(config["n_positions"], width)
        self.blocks = nn.ModuleList(Block(width, config["n_head"], bug) for _ in range(config["n_layer"]))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, config["vocab_size"], bias=False)

    def forward(self, input_ids, attention_mask):
        x = self.tok(input_ids) + self.pos(torch.arange(input_ids.shape[1]))
        for block in self.blocks:
            x = block(x, attention_mask)
        return self.head(self.norm(x))


_RENAMED = {
    "ln_1": "norm1", "ln_2": "norm2", "attn.c_attn": "attn.qkv", "attn.c_proj": "attn.out",
    "mlp.c_fc": "up", "mlp.c_proj": "down",
}  # fmt: skip


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> GPT:
    """The port with the reference's weights, renamed and Conv1D weights transposed."""
    if style is not Style.PLAIN:
        raise ValueError(f"this GPT-2 port has one style, not {style}")
    model = GPT(bug)
    converted = {"tok.weight": "wte.weight", "pos.weight": "wpe.weight", "norm.weight": "ln_f.weight"}
    converted["norm.bias"] = "ln_f.bias"
    state = {ours: reference.transformer.state_dict()[theirs] for ours, theirs in converted.items()}
    state["head.weight"] = reference.lm_head.weight
    for key, tensor in reference.transformer.h.state_dict().items():
        index, _, rest = key.partition(".")
        module, _, kind = rest.rpartition(".")
        transposed = tensor.t() if kind == "weight" and module.startswith(("attn", "mlp")) else tensor
        state[f"blocks.{index}.{_RENAMED[module]}.{kind}"] = transposed
    model.load_state_dict(state)
    return model.eval()


def final_output(model: nn.Module, given: dict) -> torch.Tensor:
    """The logits, whichever model ``model`` is."""
    output = model(**given)
    return output if isinstance(output, torch.Tensor) else output.logits
