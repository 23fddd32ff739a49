"""The architectures by name, and how to run and trace any of their models on their inputs."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from model_debugging import model_addition_debugger_context
from tests.ports import (
    Style,
    bert,
    deepseek_v3,
    distilbert,
    gemma,
    gpt2,
    llama,
    llava,
    mixtral,
    mixtral_router,
    qwen2,
    t5,
    vit,
    vit_conv,
    whisper,
)

ARCHITECTURES = {
    "gemma": gemma,
    "vit": vit,
    "t5": t5,
    "mixtral": mixtral,
    "gpt2": gpt2,
    "bert": bert,
    "vit_conv": vit_conv,
    "mixtral_router": mixtral_router,
    "whisper": whisper,
    "llama": llama,
    "distilbert": distilbert,
    "qwen2": qwen2,
    "llava": llava,
    "deepseek_v3": deepseek_v3,
}


def styles(architecture) -> tuple[Style, ...]:
    """The styles ``architecture``'s ports are written in (a port written as one codebase writes it has one)."""
    return getattr(architecture, "STYLES", tuple(Style))


def port_inputs(architecture):
    """The inputs ``architecture``'s ports take: its ``port_inputs()`` when they differ from the reference's."""
    return getattr(architecture, "port_inputs", architecture.inputs)()


def call(model: nn.Module, inputs: torch.Tensor | dict | tuple):
    """``model(**inputs)`` for a dict of inputs, ``model(*inputs)`` for a tuple, else ``model(inputs)``:
    as a user calls it."""
    if isinstance(inputs, dict):
        return model(**inputs)
    return model(*inputs) if isinstance(inputs, tuple) else model(inputs)


def trace(model: nn.Module, directory: Path, inputs: torch.Tensor | dict, **options) -> Path:
    """Trace one forward of ``model`` into ``directory``: every layer, tensors in files (``options``
    are more arguments of ``model_addition_debugger_context``)."""
    options = {"do_prune_layers": False, "use_repr": False, **options}
    with model_addition_debugger_context(model, debug_path=str(directory), **options):
        call(model, inputs)
    return directory
