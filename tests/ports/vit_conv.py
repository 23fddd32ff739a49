"""A third ViT port, as a porter writes a first version: a ``Conv2d`` patchify, the CLS token and the
position embeddings as parameters of the model, added in its own forward (no embeddings module),
blocks ``ln1``, ``attn`` (fused ``qkv``, ``proj``), ``ln2``, ``fc1``, ``fc2`` with ``F.gelu``, and a
``head`` on the CLS token. The reference is :func:`tests.ports.vit.reference`, whose
``vit.embeddings`` does in its own code (after its patch projection) what this port's forward does.
"""

from __future__ import annotations

import enum

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style
from tests.ports.vit import CONFIG, final_output, inputs, reference

__all__ = ["Bug", "STYLES", "final_output", "inputs", "port", "reference"]
STYLES = (Style.PLAIN,)


class Bug(str, enum.Enum):
    NONE = "none"
    PATCH_ORDER = "the patch grid flattened column by column: the Conv2d's output transposed before flatten"
    POSITIONS_SHIFTED = "the position embeddings added one place off (the CLS token gets the last one)"


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        size = CONFIG["hidden_size"]
        self.qkv, self.proj = nn.Linear(size, 3 * size), nn.Linear(size, size)

    def forward(self, x):
        batch, tokens, size = x.shape
        heads = CONFIG["num_attention_heads"]
        q, k, v = self.qkv(x).view(batch, tokens, 3, heads, size // heads).permute(2, 0, 3, 1, 4)
        weights = (q @ k.transpose(-1, -2) / (size // heads) ** 0.5).softmax(-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(batch, tokens, size))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        size, eps = CONFIG["hidden_size"], CONFIG["layer_norm_eps"]
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(size, eps=eps), Attention(), nn.LayerNorm(size, eps=eps)
        self.fc1, self.fc2 = (
            nn.Linear(size, CONFIG["intermediate_size"]),
            nn.Linear(CONFIG["intermediate_size"], size),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        size, patch = CONFIG["hidden_size"], CONFIG["patch_size"]
        self.patchify = nn.Conv2d(CONFIG["num_channels"], size, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, size))
        self.pos = nn.Parameter(torch.zeros(1, (CONFIG["image_size"] // patch) ** 2 + 1, size))
        self.blocks = nn.ModuleList(Block() for _ in range(CONFIG["num_hidden_layers"]))
        self.norm = nn.LayerNorm(size, eps=CONFIG["layer_norm_eps"])
        self.head = nn.Linear(size, CONFIG["num_labels"])
        self.bug = bug

    def forward(self, pixel_values):
        x = self.patchify(pixel_values)
        if self.bug is Bug.PATCH_ORDER:
            x = x.transpose(2, 3)
        x = torch.cat([self.cls.expand(len(x), -1, -1), x.flatten(2).transpose(1, 2)], dim=1)
        x = x + (self.pos.roll(1, dims=1) if self.bug is Bug.POSITIONS_SHIFTED else self.pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> nn.Module:
    """The port with the reference's weights, by a conversion map (q, k and v concatenated into ``qkv``)."""
    state = reference.state_dict()
    converted = {
        "patchify": "vit.embeddings.patch_embeddings.projection",
        "norm": "vit.layernorm",
        "head": "classifier",
    }
    weights = {"cls": state["vit.embeddings.cls_token"], "pos": state["vit.embeddings.position_embeddings"]}
    for layer in range(CONFIG["num_hidden_layers"]):
        ours, theirs = f"blocks.{layer}.", f"vit.layers.{layer}."
        converted |= {
            ours + "ln1": theirs + "layernorm_before",
            ours + "attn.proj": theirs + "attention.o_proj",
            ours + "ln2": theirs + "layernorm_after",
            ours + "fc1": theirs + "mlp.fc1",
            ours + "fc2": theirs + "mlp.fc2",
        }
        for kind in ("weight", "bias"):
            parts = [state[f"{theirs}attention.{name}_proj.{kind}"] for name in "qkv"]
            weights[f"{ours}attn.qkv.{kind}"] = torch.cat(parts)
    for ours, theirs in converted.items():
        for kind in ("weight", "bias"):
            weights[f"{ours}.{kind}"] = state[f"{theirs}.{kind}"]
    model = ViT(bug)
    model.load_state_dict(weights)
    return model.eval()
