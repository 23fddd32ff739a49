"""The architectures by name, and how to run and trace any of their models on their inputs."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from model_debugging import model_addition_debugger_context
from tests.ports import gemma, mixtral, t5, vit

ARCHITECTURES = {"gemma": gemma, "vit": vit, "t5": t5, "mixtral": mixtral}


def call(model: nn.Module, inputs: torch.Tensor | dict):
    """``model(**inputs)`` for a dict of inputs, else ``model(inputs)``: as a user calls it."""
    return model(**inputs) if isinstance(inputs, dict) else model(inputs)


def trace(model: nn.Module, directory: Path, inputs: torch.Tensor | dict, **options) -> Path:
    """Trace one forward of ``model`` into ``directory``: every layer, tensors in files (``options``
    are more arguments of ``model_addition_debugger_context``)."""
    options = {"do_prune_layers": False, "use_repr": False, **options}
    with model_addition_debugger_context(model, debug_path=str(directory), **options):
        call(model, inputs)
    return directory
