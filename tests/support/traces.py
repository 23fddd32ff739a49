"""Builders for small hand-written debugger traces (the format of docs/debugger.md), and their fixtures.

The debugger, compare and robustness tests import the fixtures into their ``conftest.py``; the
root conftest stays free of torch, so the analyzer's tests run in the base install.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from model_debugging import model_addition_debugger_context


class TraceWriter:
    """Writes ``<class_name>_debug_tree_{SUMMARY,FULL_TENSORS}.json`` the way the debugger does."""

    def __init__(self, directory: Path, *, use_repr: bool = False, class_name: str = "Toy"):
        self.directory = directory
        self.use_repr = use_repr
        self.class_name = class_name
        self._file_names: set[str] = set()
        directory.mkdir(parents=True, exist_ok=True)

    def tensor(self, name: str, tensor: torch.Tensor) -> dict:
        entry = {"shape": repr(tensor.shape), "dtype": repr(tensor.dtype)}
        if self.use_repr:
            entry["value"] = repr(tensor).splitlines()
        else:
            while name in self._file_names:  # a module called again must not overwrite its first record
                name += "_again"
            self._file_names.add(name)
            save_file({"data": tensor.contiguous()}, self.directory / f"{name}.safetensors")
            entry["value"] = f"./{name}.safetensors"
        if tensor.dtype in {torch.float16, torch.bfloat16, torch.float32}:
            entry.update({stat: repr(getattr(tensor, stat)()) for stat in ("mean", "std", "min", "max")})
        return entry

    def node(self, path: str, inputs: dict, outputs=None, children=(), **extra) -> dict:
        node = {
            "module_path": path,
            "inputs": {
                "args": [
                    self.tensor(f"{path}_inputs_args_{i}", t) for i, t in enumerate(inputs.get("args", ()))
                ]
            },
        }
        kwargs = {
            key: self.tensor(f"{path}_inputs_kwargs_{key}", t) if isinstance(t, torch.Tensor) else t
            for key, t in inputs.get("kwargs", {}).items()
        }
        if kwargs:
            node["inputs"]["kwargs"] = kwargs
        if outputs is not None:
            node["outputs"] = (
                self.tensor(f"{path}_outputs", outputs) if isinstance(outputs, torch.Tensor) else outputs
            )
        if children:
            node["children"] = list(children)
        node.update(extra)
        return node

    def write(self, root: dict, *, base: str | None = None) -> Path:
        base = base or f"{self.class_name}_debug_tree"
        full = self.directory / f"{base}_FULL_TENSORS.json"
        full.write_text(json.dumps(root, indent=2))
        (self.directory / f"{base}_SUMMARY.json").write_text(json.dumps(_strip_values(root), indent=2))
        return full


def _strip_values(value):
    if isinstance(value, dict):
        return {key: _strip_values(item) for key, item in value.items() if key != "value"}
    if isinstance(value, list):
        return [_strip_values(item) for item in value]
    return value


def write_toy_trace(
    directory: Path,
    *,
    use_repr: bool = False,
    head_scale: float = 1.0,
    class_name: str = "Toy",
    block: str = "block",
) -> Path:
    """Toy(x) -> embed -> <block>.linear -> head; ``head_scale`` perturbs only the head's output."""
    writer = TraceWriter(directory, use_repr=use_repr, class_name=class_name)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, generator=generator)
    hidden = x * 2
    projected = hidden + 1
    logits = projected.sum(-1) * head_scale
    root = writer.node(
        class_name,
        {"kwargs": {"x": x}},
        children=[
            writer.node(f"{class_name}.embed", {"args": [x]}, hidden),
            writer.node(
                f"{class_name}.{block}",
                {"args": [hidden]},
                children=[writer.node(f"{class_name}.{block}.linear", {"args": [hidden]}, projected)],
            ),
            writer.node(f"{class_name}.head", {"args": [projected]}, logits),
        ],
    )
    return writer.write(root)


@pytest.fixture
def trace_writer():
    """The :class:`TraceWriter` class: ``trace_writer(directory, use_repr=..., class_name=...)``."""
    return TraceWriter


@pytest.fixture
def toy_trace():
    """``toy_trace(directory, use_repr=False, head_scale=1.0, class_name="Toy", block="block")`` writes it."""
    return write_toy_trace


@pytest.fixture
def toy_traces(tmp_path):
    """Two full-tensor toy traces that differ only in the head's output: (reference_dir, candidate_dir)."""
    reference, candidate = tmp_path / "reference", tmp_path / "candidate"
    write_toy_trace(reference)
    write_toy_trace(candidate, head_scale=1.5)
    return reference, candidate


class Emit(torch.nn.Module):
    """A leaf that returns a fixed value, whatever its input: its recorded output is exactly ``value``."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x):
        return self.value


class Wrapper(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.emit = Emit(value)

    def forward(self, x):
        return self.emit(x)


def trace_emitting_value(directory: Path, value, use_repr: bool) -> Path:
    """Trace ``Wrapper(value)`` (module paths ``Wrapper``, ``Wrapper.emit``) into ``directory``."""
    model = Wrapper(value)
    with model_addition_debugger_context(model, debug_path=directory, use_repr=use_repr):
        model(torch.zeros(1))
    return directory


@pytest.fixture(scope="session")
def trace_emitting():
    """``trace_emitting(directory, value, use_repr)``: a trace whose leaf ``Wrapper.emit`` outputs ``value``."""
    return trace_emitting_value
