"""Traces for the explorer's tests and benchmark: toy models traced by this project's debugger, and
Llama traces (transformers, random weights from a small config, no download)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from model_debugging import model_addition_debugger_context

WIDTH = 8


class Scale(nn.Module):
    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden * self.factor


class Fail(nn.Module):
    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        raise ValueError("shapes do not line up")


class Block(nn.Module):
    def __init__(self, factor: float):
        super().__init__()
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.scale = Scale(factor)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.scale(self.proj(hidden))


class ToyModel(nn.Module):
    """``layers.i`` multiplies by ``factors[i]``; ``extra`` names a module run on the output before ``head``."""

    def __init__(self, factors: list[float], extra: dict[str, nn.Module] | None = None):
        super().__init__()
        self.layers = nn.ModuleList(Block(factor) for factor in factors)
        self.extra = nn.ModuleDict(extra or {})
        self.head = nn.Linear(WIDTH, 2)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            hidden = layer(hidden)
        for module in self.extra.values():
            hidden = module(hidden)
        return self.head(hidden)


@dataclass(frozen=True)
class ToySpec:
    factors: list[float] = field(default_factory=lambda: [1.0, 1.0, 1.0])
    extra: dict[str, float] | None = None  # name -> Scale factor
    fail: bool = False
    use_repr: bool = True
    prune: bool = False
    seed: int = 0


def write_toy_trace(directory: Path, spec: ToySpec = ToySpec()) -> Path:
    """Trace one forward of the toy model described by ``spec`` into ``directory``."""
    torch.manual_seed(spec.seed)
    extra: dict[str, nn.Module] = {name: Scale(factor) for name, factor in (spec.extra or {}).items()}
    if spec.fail:
        extra["fail"] = Fail()
    model = ToyModel(spec.factors, extra).eval()
    torch.manual_seed(1234)  # the same input whatever the weights
    hidden = torch.randn(2, 3, WIDTH)
    with model_addition_debugger_context(
        model, debug_path=str(directory), do_prune_layers=spec.prune, use_repr=spec.use_repr
    ):
        try:
            model(hidden)
        except ValueError:
            assert spec.fail, "only the failing toy model raises"
    return directory


def _tiny_llama(layers: int, seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=1000,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


def _llama_input() -> torch.Tensor:
    return torch.randint(0, 1000, (1, 8), generator=torch.Generator().manual_seed(7))


def write_llama_trace(
    directory: Path, layers: int = 2, use_repr: bool = True, broken_layer: int | None = None
) -> Path:
    """Trace a random-init Llama with this project's debugger (every layer kept).

    ``broken_layer`` scales a few rows of that layer's MLP up-projection: a porting bug to find.
    """
    model = _tiny_llama(layers, seed=0)
    if broken_layer is not None:
        with torch.no_grad():
            model.model.layers[broken_layer].mlp.up_proj.weight[:4] *= 1.5
    with model_addition_debugger_context(
        model, debug_path=str(directory), do_prune_layers=False, use_repr=use_repr
    ):
        model(_llama_input())
    return directory


def write_upstream_llama_trace(directory: Path, layers: int = 2, use_repr: bool = True) -> Path:
    """The same Llama traced by transformers' own ``model_addition_debugger_context``."""
    from transformers.model_debugging_utils import model_addition_debugger_context as upstream_context

    model = _tiny_llama(layers, seed=0)
    with upstream_context(model, debug_path=str(directory), do_prune_layers=False, use_repr=use_repr):
        model(_llama_input())
    return directory
