"""A vision-language model: transformers' LlavaForConditionalGeneration (a CLIP vision tower, a
two-layer projector, a Llama decoder), and a port of it written by hand in plain PyTorch.

The reference embeds ``input_ids``, runs its vision tower on ``pixel_values`` (a ``Conv2d`` patch
embedding, the CLS token prepended, learned positions, a pre-norm, two encoder layers), takes the
hidden states of layer ``vision_feature_layer`` (-2: the first layer's output) without their CLS
(``vision_feature_select_strategy="default"``), projects them (``linear_1``, GELU, ``linear_2``) and
writes them over the embeddings of the image placeholder tokens (``image_token_id``, one per patch, as
the processor expands them) with ``masked_scatter``, then runs its Llama decoder and LM head.

:class:`VisionLanguageModel` (``Style.PLAIN``, the only style) is written as a porter writes it:
``forward(input_ids, pixel_values, attention_mask)``, its own names (``vision.patchify / cls /
positions / ln_pre / blocks.N.ln_1 / attn.qkv / attn.proj / ln_2 / fc1 / fc2``, ``projector.fc1 / fc2``,
``embed``, ``blocks.N...``, ``ln_f``, ``head``), a fused vision ``qkv``, its vision tower returning
every layer's hidden states, the feature layer and the CLS drop chosen in its forward, the image
features written into the embeddings with a boolean mask (``index_put``), its own decoder (the
padding mask given to its blocks, rotary positions counted from each sequence's first real token).
:func:`load_weights` converts the reference's state dict as a porter's conversion script does.
"""

from __future__ import annotations

import enum

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

STYLES = (Style.PLAIN,)
IMAGE_TOKEN = 98
IMAGE_SIZE, PATCH = 16, 4
PATCHES = (IMAGE_SIZE // PATCH) ** 2


class Bug(str, enum.Enum):
    NONE = "none"
    LAST_FEATURE_LAYER = "the vision features of the last layer instead of vision_feature_layer -2"
    CLS_KEPT = "the CLS state kept and the last patch dropped instead"
    PROJECTOR_SILU = "the projector's activation SiLU instead of GELU"
    MERGE_SHIFTED = "image features written one token to the right of the placeholders"
    PATCHES_TRANSPOSED = "patches flattened column by column instead of row by row"
    PIXELS_BGR = "pixel channels read in BGR order"
    ROPE_SIGN = "rotate_half with the wrong sign"
    NORM_EPS = "every text RMS norm with eps 1e-3 instead of the config's 1e-6"


def config():
    import transformers

    vision = transformers.CLIPVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=IMAGE_SIZE,
        patch_size=PATCH, projection_dim=32,
    )  # fmt: skip
    text = transformers.LlamaConfig(
        vocab_size=99, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=4, max_position_embeddings=128, rms_norm_eps=1e-6, tie_word_embeddings=False,
    )  # fmt: skip
    return transformers.LlavaConfig(
        vision_config=vision, text_config=text, image_token_id=IMAGE_TOKEN, vision_feature_layer=-2,
        vision_feature_select_strategy="default", projector_hidden_act="gelu",
    )  # fmt: skip


def reference():
    """A tiny LlavaForConditionalGeneration with random parameters (so that the biases and norms matter)."""
    import transformers

    torch.manual_seed(0)
    return randomize(transformers.LlavaForConditionalGeneration(config()), scale=0.1)


def inputs(left_padding: int = 0, images: int = 1) -> dict:
    """Two sequences of ``2 + 16 * images + 3`` tokens, each with ``images`` runs of 16 image
    placeholders after two text tokens (the first sequence ``left_padding`` text tokens more), their
    ``pixel_values`` (``[2 * images, 3, 16, 16]``), and an ``attention_mask`` padding the second
    sequence on the left to the first's length."""
    generator = torch.Generator().manual_seed(1)
    rows = []
    for extra in (left_padding, 0):
        text = torch.randint(0, IMAGE_TOKEN, (2 + extra + 3 * images,), generator=generator).tolist()
        row = text[: 2 + extra]
        for image in range(images):
            row += [IMAGE_TOKEN] * PATCHES + text[2 + extra + 3 * image : 5 + extra + 3 * image]
        rows.append(row)
    input_ids = torch.tensor([rows[0], [0] * left_padding + rows[1]])
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, :left_padding] = 0
    pixel_values = torch.randn(2 * images, 3, IMAGE_SIZE, IMAGE_SIZE, generator=generator)
    return {"input_ids": input_ids, "pixel_values": pixel_values, "attention_mask": attention_mask}


def _rotated(x, cos, sin, sign: float):
    half = x.shape[-1] // 2
    return x * cos + sign * torch.cat((-x[..., half:], x[..., :half]), -1) * sin


class VisionBlock(nn.Module):
    def __init__(self, width: int, inner: int, heads: int, eps: float):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(width, eps=eps), nn.LayerNorm(width, eps=eps)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc1, self.fc2 = nn.Linear(width, inner), nn.Linear(inner, width)

    def forward(self, x):
        batch, tokens, width = x.shape
        q, k, v = (
            y.view(batch, tokens, self.heads, -1).transpose(1, 2) for y in self.qkv(self.ln_1(x)).chunk(3, -1)
        )
        attended = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, tokens, width))
        hidden = self.fc1(self.ln_2(x))
        return x + self.fc2(hidden * torch.sigmoid(1.702 * hidden))  # quick GELU


class VisionTower(nn.Module):
    def __init__(self, cfg, bug: Bug):
        super().__init__()
        width, self.bug = cfg.hidden_size, bug
        self.patchify = nn.Conv2d(3, width, PATCH, PATCH, bias=False)
        self.cls = nn.Parameter(torch.zeros(width))
        self.positions = nn.Parameter(torch.zeros(PATCHES + 1, width))
        self.ln_pre = nn.LayerNorm(width, eps=cfg.layer_norm_eps)
        self.blocks = nn.ModuleList(
            VisionBlock(width, cfg.intermediate_size, cfg.num_attention_heads, cfg.layer_norm_eps)
            for _ in range(cfg.num_hidden_layers)
        )

    def forward(self, pixels):
        """Every layer's hidden states: the normed embeddings, then each block's output."""
        if self.bug is Bug.PIXELS_BGR:
            pixels = pixels.flip(1)
        patches = self.patchify(pixels)
        if self.bug is Bug.PATCHES_TRANSPOSED:
            patches = patches.transpose(2, 3)
        patches = patches.flatten(2).transpose(1, 2)
        x = torch.cat((self.cls.expand(len(patches), 1, -1), patches), 1) + self.positions
        states = [self.ln_pre(x)]
        for block in self.blocks:
            states.append(block(states[-1]))
        return states


class Projector(nn.Module):
    def __init__(self, vision_width: int, width: int, bug: Bug):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(vision_width, width), nn.Linear(width, width)
        self.activation = F.silu if bug is Bug.PROJECTOR_SILU else F.gelu

    def forward(self, features):
        return self.fc2(self.activation(self.fc1(features)))


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(width)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Attention(nn.Module):
    def __init__(self, cfg, bug: Bug):
        super().__init__()
        width, self.heads = cfg.hidden_size, cfg.num_attention_heads
        self.sign = -1.0 if bug is Bug.ROPE_SIGN else 1.0
        self.q, self.k, self.v, self.o = (nn.Linear(width, width, bias=False) for _ in range(4))

    def forward(self, x, cos, sin, mask):
        batch, tokens, width = x.shape

        def split(y):
            return y.view(batch, tokens, self.heads, -1).transpose(1, 2)

        q = _rotated(split(self.q(x)), cos, sin, self.sign)
        k = _rotated(split(self.k(x)), cos, sin, self.sign)
        allowed = torch.ones(tokens, tokens, dtype=torch.bool).tril() & mask.bool()[:, None, None, :]
        scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        weights = scores.masked_fill(~allowed, torch.finfo(q.dtype).min).softmax(-1)
        return self.o((weights @ split(self.v(x))).transpose(1, 2).reshape(batch, tokens, width))


class Block(nn.Module):
    def __init__(self, cfg, eps: float, bug: Bug):
        super().__init__()
        width, inner = cfg.hidden_size, cfg.intermediate_size
        self.ln_1, self.ln_2 = RMSNorm(width, eps), RMSNorm(width, eps)
        self.attn = Attention(cfg, bug)
        self.w1, self.w3 = nn.Linear(width, inner, bias=False), nn.Linear(width, inner, bias=False)
        self.w2 = nn.Linear(inner, width, bias=False)

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.ln_1(x), cos, sin, mask)
        normed = self.ln_2(x)
        return x + self.w2(F.silu(self.w1(normed)) * self.w3(normed))


class VisionLanguageModel(nn.Module):
    def __init__(self, cfg, bug: Bug = Bug.NONE):
        super().__init__()
        text, self.bug = cfg.text_config, bug
        eps = 1e-3 if bug is Bug.NORM_EPS else text.rms_norm_eps
        self.feature_layer, self.image_token = cfg.vision_feature_layer, cfg.image_token_id
        self.head_dim, self.theta = (
            text.hidden_size // text.num_attention_heads,
            text.rope_parameters["rope_theta"],
        )
        self.vision = VisionTower(cfg.vision_config, bug)
        self.projector = Projector(cfg.vision_config.hidden_size, text.hidden_size, bug)
        self.embed = nn.Embedding(text.vocab_size, text.hidden_size)
        self.blocks = nn.ModuleList(Block(text, eps, bug) for _ in range(text.num_hidden_layers))
        self.ln_f = RMSNorm(text.hidden_size, eps)
        self.head = nn.Linear(text.hidden_size, text.vocab_size, bias=False)

    def image_features(self, pixel_values):
        states = self.vision(pixel_values)
        features = states[-1 if self.bug is Bug.LAST_FEATURE_LAYER else self.feature_layer]
        features = features[:, :-1] if self.bug is Bug.CLS_KEPT else features[:, 1:]
        return self.projector(features)

    def forward(self, input_ids, pixel_values, attention_mask):
        x = self.embed(input_ids)
        placeholders = input_ids == self.image_token
        if self.bug is Bug.MERGE_SHIFTED:
            placeholders = placeholders.roll(1, dims=1)
        x[placeholders] = self.image_features(pixel_values).reshape(-1, x.shape[-1]).to(x.dtype)
        positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        inverse = 1.0 / self.theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)
        angles = positions[..., None].float() * inverse
        angles = torch.cat((angles, angles), -1)[:, None]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        for block in self.blocks:
            x = block(x, cos, sin, attention_mask)
        return self.head(self.ln_f(x))


def load_weights(model: VisionLanguageModel, state: dict) -> VisionLanguageModel:
    """Copy a LlavaForConditionalGeneration state dict into ``model``: renamed, the vision q/k/v fused."""
    tower, text = "model.vision_tower.", "model.language_model."
    weights = {
        "vision.patchify.weight": state[tower + "embeddings.patch_embedding.weight"],
        "vision.cls": state[tower + "embeddings.class_embedding"],
        "vision.positions": state[tower + "embeddings.position_embedding.weight"],
        "embed.weight": state[text + "embed_tokens.weight"],
        "ln_f.weight": state[text + "norm.weight"],
        "head.weight": state["lm_head.weight"],
    }
    for kind in ("weight", "bias"):
        weights[f"vision.ln_pre.{kind}"] = state[f"{tower}pre_layrnorm.{kind}"]
        for ours, theirs in (("fc1", "linear_1"), ("fc2", "linear_2")):
            weights[f"projector.{ours}.{kind}"] = state[f"model.multi_modal_projector.{theirs}.{kind}"]
    for index in range(len(model.vision.blocks)):
        ours, theirs = f"vision.blocks.{index}.", f"{tower}encoder.layers.{index}."
        for kind in ("weight", "bias"):
            weights[f"{ours}qkv.{kind}"] = torch.cat(
                [state[f"{theirs}self_attn.{p}_proj.{kind}"] for p in "qkv"]
            )
            for name, their_name in (
                ("proj", "self_attn.out_proj"), ("ln_1", "layer_norm1"), ("ln_2", "layer_norm2"),
                ("fc1", "mlp.fc1"), ("fc2", "mlp.fc2"),
            ):  # fmt: skip
                weights[f"{ours}{name}.{kind}"] = state[f"{theirs}{their_name}.{kind}"]
    for index in range(len(model.blocks)):
        ours, theirs = f"blocks.{index}.", f"{text}layers.{index}."
        for name, their_name in (
            ("ln_1", "input_layernorm"), ("ln_2", "post_attention_layernorm"), ("attn.q", "self_attn.q_proj"),
            ("attn.k", "self_attn.k_proj"), ("attn.v", "self_attn.v_proj"), ("attn.o", "self_attn.o_proj"),
            ("w1", "mlp.gate_proj"), ("w3", "mlp.up_proj"), ("w2", "mlp.down_proj"),
        ):  # fmt: skip
            weights[f"{ours}{name}.weight"] = state[f"{theirs}{their_name}.weight"]
    model.load_state_dict(weights)
    return model


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> VisionLanguageModel:
    """The port with ``bug`` planted, its weights converted from the reference's."""
    if style is not Style.PLAIN:
        raise ValueError(f"the LLaVA port has one style, not {style}")
    return load_weights(VisionLanguageModel(reference.config, bug), dict(reference.state_dict())).eval()


def final_output(model: nn.Module, given: dict) -> torch.Tensor:
    """The logits, whichever model ``model`` is."""
    if isinstance(model, VisionLanguageModel):
        return model(**given)
    return model(**given).logits
