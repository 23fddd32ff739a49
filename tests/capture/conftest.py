"""Toy models for the capture tests: a decoder whose blocks have self- and cross-attention."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from model_debugging.output_capturing import ModelOutput, OutputRecorder, capture_outputs


@dataclass
class ToyOutput(ModelOutput):
    last_hidden_state: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
    cross_attentions: tuple[torch.Tensor, ...] | None = None


class Attention(nn.Module):
    """Single-head attention returning ``(output, weights)``."""

    def __init__(self, size: int):
        super().__init__()
        self.query = nn.Linear(size, size)
        self.key = nn.Linear(size, size)
        self.value = nn.Linear(size, size)

    def forward(self, hidden, context=None):
        context = hidden if context is None else context
        scores = self.query(hidden) @ self.key(context).transpose(-1, -2) / hidden.shape[-1] ** 0.5
        weights = scores.softmax(-1)
        return weights @ self.value(context), weights


class Block(nn.Module):
    def __init__(self, size: int, cross: bool):
        super().__init__()
        self.self_attn = Attention(size)
        self.crossattention = Attention(size) if cross else None
        self.mlp = nn.Sequential(nn.Linear(size, 2 * size), nn.GELU(), nn.Linear(2 * size, size))

    def forward(self, hidden, encoder_hidden=None):
        hidden = hidden + self.self_attn(hidden)[0]
        if self.crossattention is not None:
            hidden = hidden + self.crossattention(hidden, encoder_hidden)[0]
        return hidden + self.mlp(hidden)


def toy_config(**overrides) -> SimpleNamespace:
    values = {"hidden_size": 8, "num_hidden_layers": 3, "vocab_size": 11, "cross": False}
    return SimpleNamespace(**{**values, **overrides})


class Decoder(nn.Module):
    _can_record_outputs = {
        "hidden_states": Block,
        "attentions": OutputRecorder(Attention, layer_name="self_attn"),
    }

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(
            Block(config.hidden_size, config.cross) for _ in range(config.num_hidden_layers)
        )
        self.norm = nn.LayerNorm(config.hidden_size)

    @capture_outputs
    def forward(self, input_ids, encoder_hidden=None, **kwargs):
        hidden = self.embed(input_ids)
        for layer in self.layers:
            hidden = layer(hidden, encoder_hidden)
        return ToyOutput(last_hidden_state=self.norm(hidden))


class CrossDecoder(Decoder):
    _can_record_outputs = {
        "hidden_states": Block,
        "attentions": OutputRecorder(Attention, layer_name="self_attn"),
        "cross_attentions": OutputRecorder(Attention, layer_name="crossattention", index=1),
    }


def manual_outputs(model: Decoder, input_ids, encoder_hidden=None) -> dict[str, list[torch.Tensor]]:
    """What a hand-written forward would collect: layer inputs/outputs and attention weights."""
    hidden = model.embed(input_ids)
    collected = {"hidden_states": [hidden], "layer_outputs": [], "attentions": [], "cross_attentions": []}
    for layer in model.layers:
        collected["attentions"].append(layer.self_attn(hidden)[1])
        if layer.crossattention is not None:
            after_self = hidden + layer.self_attn(hidden)[0]
            collected["cross_attentions"].append(layer.crossattention(after_self, encoder_hidden)[1])
        hidden = layer(hidden, encoder_hidden)
        collected["layer_outputs"].append(hidden)
        collected["hidden_states"].append(hidden)
    collected["hidden_states"][-1] = model.norm(hidden)
    return collected


def recording_hooks(module: nn.Module) -> int:
    """Number of recording hooks on ``module`` itself."""
    return sum(type(hook).__name__ == "_RecordingHook" for hook in module._forward_hooks.values())


@pytest.fixture
def toy():
    """The toy classes and helpers, as attributes."""
    torch.manual_seed(0)
    return SimpleNamespace(
        Attention=Attention,
        Block=Block,
        Decoder=Decoder,
        CrossDecoder=CrossDecoder,
        ToyOutput=ToyOutput,
        config=toy_config,
        manual_outputs=manual_outputs,
        recording_hooks=recording_hooks,
        input_ids=torch.tensor([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]),
    )
