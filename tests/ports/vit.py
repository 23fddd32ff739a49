"""A vision encoder: transformers' ViTForImageClassification, and two hand-written ports of it.

The reference embeds patches with a ``Conv2d``, has separate q/k/v projections in an attention
module, an MLP module with a ``GELUActivation`` module, and classifies the CLS token.

- :class:`PlainViT` (``Style.PLAIN``): patches cut with ``F.unfold`` and embedded by an
  ``nn.Linear``, flat blocks (``norm1``, fused ``qkv``, ``proj``, ``norm2``, ``fc1``, ``fc2`` directly
  in the block, no attention or MLP module), ``F.gelu``, no ``vit`` wrapper.
- :class:`KeywordViT` (``Style.KEYWORDS``): transformers-style keyword arguments, an embeddings
  module (unfold + Linear), attention and MLP modules with a fused ``qkv_proj`` and ``F.gelu``.

Bugs are planted in layer :data:`BUGGY_LAYER` where they concern one layer.
"""

from __future__ import annotations

import enum

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

CONFIG = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=16,
    patch_size=4, num_channels=3, num_labels=5, layer_norm_eps=1e-12, hidden_act="gelu",
)  # fmt: skip
BUGGY_LAYER = 1


class Bug(str, enum.Enum):
    NONE = "none"
    SWAPPED_FUSED_HALVES = "query and key parts of the fused qkv weight swapped"
    PATCH_ORDER = "patch weight flattened as (row, column, channel) instead of (channel, row, column)"
    ATTENTION_SCALE = "attention scaled by 1/sqrt(hidden) instead of 1/sqrt(head_dim)"
    GELU_TANH = "tanh-approximated GELU where the reference uses the exact one"
    NORM_WITHOUT_BIAS = "one layer norm without its bias"
    RESIDUAL_FROM_NORMED = "attention residual taken from the normed input"
    FINAL_NORM_SKIPPED = "the final layer norm before the classifier never applied (its weights are loaded)"


def reference():
    """A tiny ViTForImageClassification with random parameters (eager attention)."""
    import transformers

    config = transformers.ViTConfig(**CONFIG, attn_implementation="eager")
    torch.manual_seed(0)
    return randomize(transformers.ViTForImageClassification(config))


def inputs(batch: int = 2) -> torch.Tensor:
    """``pixel_values`` of shape ``[batch, channels, size, size]``."""
    size, channels = CONFIG["image_size"], CONFIG["num_channels"]
    return torch.randn(batch, channels, size, size, generator=torch.Generator().manual_seed(1))


def _attention(q, k, v, scale):
    probs = F.softmax(torch.matmul(q, k.transpose(2, 3)) * scale, dim=-1, dtype=torch.float32).to(q.dtype)
    return torch.matmul(probs, v), probs


def _scale(config: dict, bug: Bug) -> float:
    heads = config["num_attention_heads"]
    if bug is Bug.ATTENTION_SCALE:  # planted
        return config["hidden_size"] ** -0.5
    return (config["hidden_size"] // heads) ** -0.5


def _gelu(x, bug: Bug):
    return F.gelu(x, approximate="tanh" if bug is Bug.GELU_TANH else "none")


def _patches(pixels, patch: int):
    """[batch, patches, channels * patch * patch], in the Conv2d weight's (channel, row, column) order."""
    return F.unfold(pixels, kernel_size=patch, stride=patch).transpose(1, 2)


# ---- the plain port ------------------------------------------------------------------------------


class Block(nn.Module):
    def __init__(self, config: dict, bug: Bug, buggy: bool):
        super().__init__()
        dim, eps = config["hidden_size"], config["layer_norm_eps"]
        self.heads, self.bug, self.scale = config["num_attention_heads"], bug, _scale(config, bug)
        self.residual_from_normed = buggy and bug is Bug.RESIDUAL_FROM_NORMED
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=eps, bias=not (buggy and bug is Bug.NORM_WITHOUT_BIAS))
        self.fc1 = nn.Linear(dim, config["intermediate_size"])
        self.fc2 = nn.Linear(config["intermediate_size"], dim)

    def forward(self, x):
        batch, tokens, dim = x.shape
        h = self.norm1(x)
        q, k, v = self.qkv(h).view(batch, tokens, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        out, _ = _attention(q, k, v, self.scale)
        x = (h if self.residual_from_normed else x) + self.proj(
            out.transpose(1, 2).reshape(batch, tokens, dim)
        )
        return x + self.fc2(_gelu(self.fc1(self.norm2(x)), self.bug))


class PlainViT(nn.Module):
    def __init__(self, config: dict = CONFIG, bug: Bug = Bug.NONE):
        super().__init__()
        dim, patch = config["hidden_size"], config["patch_size"]
        self.patch, self.bug = patch, bug
        self.patch_embed = nn.Linear(config["num_channels"] * patch * patch, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, (config["image_size"] // patch) ** 2 + 1, dim))
        self.blocks = nn.ModuleList(
            Block(config, bug, i == BUGGY_LAYER) for i in range(config["num_hidden_layers"])
        )
        self.norm = nn.LayerNorm(dim, eps=config["layer_norm_eps"])
        self.head = nn.Linear(dim, config["num_labels"])

    def forward(self, pixels):
        x = self.patch_embed(_patches(pixels, self.patch))
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head((x if self.bug is Bug.FINAL_NORM_SKIPPED else self.norm(x))[:, 0])


def _patch_weight(state: dict, bug: Bug) -> torch.Tensor:
    conv = state["vit.embeddings.patch_embeddings.projection.weight"]  # [dim, channels, row, column]
    if bug is Bug.PATCH_ORDER:  # planted
        return conv.permute(0, 2, 3, 1).reshape(conv.shape[0], -1)
    return conv.reshape(conv.shape[0], -1)


def _qkv(state: dict, prefix: str, kind: str, bug: Bug, layer: int) -> torch.Tensor:
    parts = [state[f"{prefix}{name}_proj.{kind}"] for name in "qkv"]
    if bug is Bug.SWAPPED_FUSED_HALVES and layer == BUGGY_LAYER:  # planted
        parts[0], parts[1] = parts[1], parts[0]
    return torch.cat(parts)


def _plain_weights(state: dict, config: dict, bug: Bug) -> dict:
    weights = {
        "patch_embed.weight": _patch_weight(state, bug),
        "patch_embed.bias": state["vit.embeddings.patch_embeddings.projection.bias"],
        "cls_token": state["vit.embeddings.cls_token"],
        "pos_embed": state["vit.embeddings.position_embeddings"],
        "norm.weight": state["vit.layernorm.weight"],
        "norm.bias": state["vit.layernorm.bias"],
        "head.weight": state["classifier.weight"],
        "head.bias": state["classifier.bias"],
    }
    for layer in range(config["num_hidden_layers"]):
        theirs, ours = f"vit.layers.{layer}.", f"blocks.{layer}."
        for kind in ("weight", "bias"):
            weights[f"{ours}norm1.{kind}"] = state[f"{theirs}layernorm_before.{kind}"]
            weights[f"{ours}norm2.{kind}"] = state[f"{theirs}layernorm_after.{kind}"]
            weights[f"{ours}qkv.{kind}"] = _qkv(state, theirs + "attention.", kind, bug, layer)
            weights[f"{ours}proj.{kind}"] = state[f"{theirs}attention.o_proj.{kind}"]
            weights[f"{ours}fc1.{kind}"] = state[f"{theirs}mlp.fc1.{kind}"]
            weights[f"{ours}fc2.{kind}"] = state[f"{theirs}mlp.fc2.{kind}"]
    return weights


# ---- the transformers-style port -----------------------------------------------------------------


class KeywordEmbeddings(nn.Module):
    def __init__(self, config: dict):
        super().__init__()
        dim, patch = config["hidden_size"], config["patch_size"]
        self.patch_size = patch
        self.patch_projection = nn.Linear(config["num_channels"] * patch * patch, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.position_embeddings = nn.Parameter(torch.zeros(1, (config["image_size"] // patch) ** 2 + 1, dim))

    def forward(self, pixel_values):
        embeddings = self.patch_projection(_patches(pixel_values, self.patch_size))
        cls = self.cls_token.expand(embeddings.shape[0], -1, -1)
        return torch.cat((cls, embeddings), dim=1) + self.position_embeddings


class KeywordAttention(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        dim = config["hidden_size"]
        self.heads, self.scale = config["num_attention_heads"], _scale(config, bug)
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, attention_mask=None, **kwargs):
        batch, tokens, dim = hidden_states.shape
        query, key, value = (
            states.view(batch, tokens, self.heads, -1).transpose(1, 2)
            for states in self.qkv_proj(hidden_states).chunk(3, dim=-1)
        )
        output, weights = _attention(query, key, value, self.scale)
        return self.o_proj(output.transpose(1, 2).reshape(batch, tokens, dim)), weights


class KeywordMLP(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        self.bug = bug
        self.fc1 = nn.Linear(config["hidden_size"], config["intermediate_size"])
        self.fc2 = nn.Linear(config["intermediate_size"], config["hidden_size"])

    def forward(self, hidden_states):
        return self.fc2(_gelu(self.fc1(hidden_states), self.bug))


class KeywordLayer(nn.Module):
    def __init__(self, config: dict, bug: Bug, buggy: bool):
        super().__init__()
        dim, eps = config["hidden_size"], config["layer_norm_eps"]
        self.residual_from_normed = buggy and bug is Bug.RESIDUAL_FROM_NORMED
        self.layernorm_before = nn.LayerNorm(dim, eps=eps)
        self.attention = KeywordAttention(config, bug)
        self.layernorm_after = nn.LayerNorm(dim, eps=eps, bias=not (buggy and bug is Bug.NORM_WITHOUT_BIAS))
        self.mlp = KeywordMLP(config, bug)

    def forward(self, hidden_states, attention_mask=None, **kwargs):
        normed = self.layernorm_before(hidden_states)
        attended, _ = self.attention(hidden_states=normed, attention_mask=attention_mask)
        hidden_states = (normed if self.residual_from_normed else hidden_states) + attended
        return hidden_states + self.mlp(hidden_states=self.layernorm_after(hidden_states))


class KeywordEncoder(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        self.bug = bug
        self.embeddings = KeywordEmbeddings(config)
        self.layers = nn.ModuleList(
            KeywordLayer(config, bug, i == BUGGY_LAYER) for i in range(config["num_hidden_layers"])
        )
        self.layernorm = nn.LayerNorm(config["hidden_size"], eps=config["layer_norm_eps"])

    def forward(self, pixel_values):
        hidden_states = self.embeddings(pixel_values=pixel_values)
        for layer in self.layers:
            hidden_states = layer(hidden_states=hidden_states)
        return hidden_states if self.bug is Bug.FINAL_NORM_SKIPPED else self.layernorm(hidden_states)


class KeywordViT(nn.Module):
    def __init__(self, config: dict = CONFIG, bug: Bug = Bug.NONE):
        super().__init__()
        self.vit = KeywordEncoder(config, bug)
        self.classifier = nn.Linear(config["hidden_size"], config["num_labels"])

    def forward(self, pixel_values):
        return self.classifier(self.vit(pixel_values=pixel_values)[:, 0])


def _keyword_weights(state: dict, config: dict, bug: Bug) -> dict:
    weights = {
        "vit.embeddings.patch_projection.weight": _patch_weight(state, bug),
        "vit.embeddings.patch_projection.bias": state["vit.embeddings.patch_embeddings.projection.bias"],
    }
    for name, tensor in state.items():
        if ".attention.q_proj." in name:
            prefix, kind = name.split(".attention.q_proj.")
            layer = int(prefix.rsplit(".", 1)[1])
            weights[f"{prefix}.attention.qkv_proj.{kind}"] = _qkv(
                state, prefix + ".attention.", kind, bug, layer
            )
        elif "patch_embeddings" in name or any(f".attention.{part}_proj." in name for part in "kv"):
            continue
        elif not (bug is Bug.NORM_WITHOUT_BIAS and name == f"vit.layers.{BUGGY_LAYER}.layernorm_after.bias"):
            weights[name] = tensor
    return weights


def port(reference: nn.Module, style: Style, bug: Bug = Bug.NONE) -> nn.Module:
    """A port of ``reference`` in ``style`` with ``bug`` planted, its weights converted from the reference's."""
    state = dict(reference.state_dict())
    if style is Style.PLAIN:
        model, weights = PlainViT(CONFIG, bug), _plain_weights(state, CONFIG, bug)
        if bug is Bug.NORM_WITHOUT_BIAS:
            del weights[f"blocks.{BUGGY_LAYER}.norm2.bias"]
    else:
        model, weights = KeywordViT(CONFIG, bug), _keyword_weights(state, CONFIG, bug)
    model.load_state_dict(weights)
    return model.eval()


def final_output(model: nn.Module, pixel_values: torch.Tensor) -> torch.Tensor:
    """The logits, whichever model ``model`` is."""
    output = model(pixel_values)
    return output if isinstance(output, torch.Tensor) else output.logits
