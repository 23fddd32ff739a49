"""A toy decoder declared once and decorated with either implementation's `capture_outputs`."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import nn
from transformers.utils import ModelOutput

from tests.differential.implementations import Implementation


@dataclass
class ToyOutput(ModelOutput):
    """transformers' own output base, so both decorators fill the same kind of object."""

    last_hidden_state: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
    cross_attentions: tuple[torch.Tensor, ...] | None = None
    mask_decoder_attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class VisionToyOutput(ToyOutput):
    vision_hidden_states: torch.Tensor | None = None


class Attention(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.query = nn.Linear(size, size)
        self.key = nn.Linear(size, size)

    def forward(self, hidden, context=None):
        context = hidden if context is None else context
        weights = (self.query(hidden) @ self.key(context).transpose(-1, -2)).softmax(-1)
        return weights @ context, weights


class Block(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.self_attn = Attention(size)
        self.crossattention = Attention(size)
        self.mlp = nn.Linear(size, size)

    def forward(self, hidden, context):
        hidden = hidden + self.self_attn(hidden)[0]
        hidden = hidden + self.crossattention(hidden, context)[0]
        return (hidden + self.mlp(hidden),)


def toy_decoder(
    implementation: Implementation, declaration: dict, *, tie: bool = True, vision_marker=False, **config
) -> nn.Module:
    """A 3-layer decoder with ``declaration`` as ``_can_record_outputs``, the same weights for every call.

    ``vision_marker`` other than False makes it return a `VisionToyOutput` with that ``vision_hidden_states``.
    """

    class ToyDecoder(nn.Module):
        _can_record_outputs = declaration

        def __init__(self):
            super().__init__()
            self.config = SimpleNamespace(**config)
            self.embed = nn.Embedding(11, 8)
            self.layers = nn.ModuleList(Block(8) for _ in range(3))
            self.norm = nn.LayerNorm(8)
            implementation.register_declaration(self)

        @implementation.capturing.capture_outputs(tie_last_hidden_states=tie)
        def forward(self, input_ids, context, **kwargs):
            hidden = self.embed(input_ids)
            for layer in self.layers:
                hidden = layer(hidden, context)[0]
            if vision_marker is False:
                return ToyOutput(last_hidden_state=self.norm(hidden))
            return VisionToyOutput(last_hidden_state=self.norm(hidden), vision_hidden_states=vision_marker)

    torch.manual_seed(0)
    return ToyDecoder().eval()


def toy_inputs() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return {
        "input_ids": torch.randint(0, 11, (2, 5), generator=generator),
        "context": torch.randn(2, 4, 8, generator=generator),
    }
