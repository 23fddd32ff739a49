"""A decoder: transformers' GPT2LMHeadModel, and a port of it written as karpathy/nanoGPT writes it.

The reference projects with ``Conv1D`` modules (weights stored ``[in, out]``), has a
``NewGELUActivation`` module (the tanh approximation), an additive causal mask, dropout modules,
and an ``lm_head`` tied to ``wte``.

:class:`GPT` (``Style.PLAIN``, the only style): nanoGPT's ``model.py`` layout, ``transformer.wte /
wpe / drop / h / ln_f`` in an ``nn.ModuleDict``, ``Block(x)``, a ``CausalSelfAttention`` whose one
``nn.Linear`` ``c_attn`` makes q, k and v (split with ``.split(n_embd, dim=2)``) attending through
``F.scaled_dot_product_attention(is_causal=True)`` (or, with ``flash=False``, by hand under a
``tril`` buffer), its own ``LayerNorm`` module over ``F.layer_norm``, ``MLP(c_fc, gelu, c_proj)``,
an ``lm_head`` tied to ``wte``, and ``forward(idx, targets=None) -> (logits, loss)``. Weights are
converted as nanoGPT's ``from_pretrained`` does: every Conv1D weight transposed.

Bugs are planted in every layer (the conversion and the classes apply to all of them).
"""

from __future__ import annotations

import enum
import math

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

CONFIG = dict(
    n_embd=32, n_layer=2, n_head=4, n_positions=32, vocab_size=100, bos_token_id=0, eos_token_id=0,
    layer_norm_epsilon=1e-5,
)  # fmt: skip
STYLES = (Style.PLAIN,)
CONV1D_WEIGHTS = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


class Bug(str, enum.Enum):
    NONE = "none"
    UNTRANSPOSED_PROJ = "attn.c_proj's Conv1D weight copied without the transpose (it is square)"
    EXACT_GELU = "nn.GELU() (exact) where GPT-2 uses the tanh approximation"
    SCALE_BY_HEAD_DIM = "attention scores scaled by 1/head_dim instead of 1/sqrt(head_dim)"
    MASK_OFF_BY_ONE = "the causal mask lets each token see the next one"
    FINAL_NORM_SKIPPED = "ln_f never applied before lm_head (its weights are loaded)"


def reference():
    """A tiny GPT2LMHeadModel with random parameters (eager attention)."""
    import transformers

    config = transformers.GPT2Config(**CONFIG, attn_implementation="eager")
    torch.manual_seed(0)
    return randomize(transformers.GPT2LMHeadModel(config))


def inputs(batch: int = 2, tokens: int = 8) -> torch.Tensor:
    """``input_ids`` of shape ``[batch, tokens]``."""
    return torch.randint(0, CONFIG["vocab_size"], (batch, tokens), generator=torch.Generator().manual_seed(1))


def port_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    """``(idx, targets)``: nanoGPT's forward computes the logits of every position only when given
    targets (at inference, those of the last position alone)."""
    input_ids = inputs()
    return input_ids, input_ids


class LayerNorm(nn.Module):
    def __init__(self, ndim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim))

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: dict, bug: Bug, flash: bool):
        super().__init__()
        self.n_head, self.n_embd, self.bug, self.flash = config["n_head"], config["n_embd"], bug, flash
        self.c_attn = nn.Linear(self.n_embd, 3 * self.n_embd)
        self.c_proj = nn.Linear(self.n_embd, self.n_embd)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        if not flash:
            size = config["n_positions"]
            visible = torch.tril(torch.ones(size, size), diagonal=1 if bug is Bug.MASK_OFF_BY_ONE else 0)
            self.register_buffer("bias", visible.view(1, 1, size, size), persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        scale = 1.0 / (k.size(-1) if self.bug is Bug.SCALE_BY_HEAD_DIM else math.sqrt(k.size(-1)))
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
        else:
            att = (q @ k.transpose(-2, -1)) * scale
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            y = self.attn_dropout(F.softmax(att, dim=-1)) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        self.c_fc = nn.Linear(config["n_embd"], 4 * config["n_embd"])
        self.gelu = nn.GELU() if bug is Bug.EXACT_GELU else nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * config["n_embd"], config["n_embd"])
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config: dict, bug: Bug, flash: bool):
        super().__init__()
        self.ln_1 = LayerNorm(config["n_embd"])
        self.attn = CausalSelfAttention(config, bug, flash)
        self.ln_2 = LayerNorm(config["n_embd"])
        self.mlp = MLP(config, bug)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config: dict = CONFIG, bug: Bug = Bug.NONE, flash: bool = True):
        super().__init__()
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config["vocab_size"], config["n_embd"]),
                wpe=nn.Embedding(config["n_positions"], config["n_embd"]),
                drop=nn.Dropout(0.1),
                h=nn.ModuleList(Block(config, bug, flash) for _ in range(config["n_layer"])),
                ln_f=LayerNorm(config["n_embd"]),
            )
        )
        self.lm_head = nn.Linear(config["n_embd"], config["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.bug = bug

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        if self.bug is not Bug.FINAL_NORM_SKIPPED:
            x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            return logits, F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        return self.lm_head(x[:, [-1], :]), None  # at inference, only the last position


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> GPT:
    """nanoGPT's ``from_pretrained``: the reference's state dict copied key by key, Conv1D weights
    transposed. The port attends with ``F.scaled_dot_product_attention``, by hand (where the mask
    bug is) with ``Bug.MASK_OFF_BY_ONE``."""
    flash = bug is not Bug.MASK_OFF_BY_ONE
    if style is not Style.PLAIN:
        raise ValueError(f"the nanoGPT port has one style, not {style}")
    model = GPT(CONFIG, bug, flash)
    transposed = [
        name for name in CONV1D_WEIGHTS if not (bug is Bug.UNTRANSPOSED_PROJ and name == "attn.c_proj.weight")
    ]
    ours = model.state_dict()
    with torch.no_grad():
        for key, tensor in reference.state_dict().items():
            ours[key].copy_(tensor.t() if any(key.endswith(name) for name in transposed) else tensor)
    return model.eval()


def final_output(model: nn.Module, input_ids: torch.Tensor) -> torch.Tensor:
    """The logits of the last position, whichever model ``model`` is."""
    output = model(input_ids)
    logits = output[0] if isinstance(output, tuple) else output.logits
    return logits[:, -1]
