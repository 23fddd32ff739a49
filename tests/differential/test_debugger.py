"""transformers' `model_addition_debugger_context` and ours, on the toy models of its own tests.

Covers, in our own words, each case of transformers' tests/utils/test_model_debugging_utils.py
(2026-03-30). Deeper trace comparisons on a real Llama live in tests/debugger/test_upstream_compat.py.
"""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from torch import nn

from model_debugging.model_debugging_utils import model_addition_debugger_context

pytestmark = pytest.mark.integration

CONTEXTS = {
    "transformers": transformers.model_addition_debugger_context,
    "ours": model_addition_debugger_context,
}


class EmbedThenProject(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.first = nn.Linear(4, 8)
        self.second = nn.Linear(8, 2)

    def forward(self, input_ids):
        return self.second(torch.relu(self.first(self.embed(input_ids).mean(dim=1))))


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, hidden):
        return self.linear(hidden)


class SixSteps(nn.Module):
    def __init__(self):
        super().__init__()
        self.inputs = nn.Linear(4, 4)
        self.layers = nn.ModuleList(Step() for _ in range(6))
        self.outputs = nn.Linear(4, 2)

    def forward(self, x):
        x = self.inputs(x)
        for layer in self.layers:
            x = layer(x)
        return self.outputs(x)


def trace(context, model, directory, **inputs_and_options):
    options = {
        key: inputs_and_options.pop(key)
        for key in ("do_prune_layers", "use_repr")
        if key in inputs_and_options
    }
    saved = torch._tensor_str.get_printoptions()
    try:
        with context(model, debug_path=str(directory), **options):
            model.forward(**inputs_and_options)
    finally:
        torch.set_printoptions(**saved)  # transformers' context leaves them changed
    return directory


@pytest.mark.parametrize("name", CONTEXTS)
def test_a_trace_writes_both_files_with_a_root_node_and_children(name, tmp_path):
    directory = trace(CONTEXTS[name], EmbedThenProject(), tmp_path, input_ids=torch.randint(0, 10, (1, 3)))
    summary = directory / "EmbedThenProject_debug_tree_SUMMARY.json"
    assert summary.is_file() and (directory / "EmbedThenProject_debug_tree_FULL_TENSORS.json").is_file()
    root = json.loads(summary.read_text())
    assert {"module_path", "inputs", "children"} <= root.keys()
    assert [child["module_path"] for child in root["children"]] == [
        "EmbedThenProject.embed",
        "EmbedThenProject.first",
        "EmbedThenProject.second",
    ]


@pytest.mark.parametrize("name", CONTEXTS)
@pytest.mark.parametrize(("prune", "kept"), [(False, [0, 1, 2, 3, 4, 5]), (True, [0, 5])])
def test_pruning_keeps_the_first_and_last_numbered_layer(name, prune, kept, tmp_path):
    directory = trace(CONTEXTS[name], SixSteps(), tmp_path, x=torch.randn(1, 4), do_prune_layers=prune)
    root = json.loads((directory / "SixSteps_debug_tree_SUMMARY.json").read_text())
    assert set(root) == {"module_path", "inputs", "children"}
    paths = [child["module_path"] for child in root["children"]]
    assert paths == ["SixSteps.inputs", *(f"SixSteps.layers.{index}" for index in kept), "SixSteps.outputs"]


def key_sets(value, where="root"):
    """(where, sorted keys) of every object of a trace file: nodes, inputs, tensor entries."""
    if isinstance(value, dict):
        yield where, sorted(value)
        for key, item in value.items():
            yield from key_sets(item, f"{where}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from key_sets(item, f"{where}/{index}")


@pytest.mark.parametrize("use_repr", [True, False])
@pytest.mark.parametrize("prune", [True, False])
def test_every_node_and_tensor_entry_has_exactly_upstreams_keys(use_repr, prune, tmp_path):
    keys, files = {}, {}
    for name, context in CONTEXTS.items():
        torch.manual_seed(0)
        directory = trace(
            context,
            SixSteps(),
            tmp_path / name,
            x=torch.randn(1, 4),
            do_prune_layers=prune,
            use_repr=use_repr,
        )
        keys[name] = {
            kind: list(key_sets(json.loads((directory / f"SixSteps_debug_tree_{kind}.json").read_text())))
            for kind in ("SUMMARY", "FULL_TENSORS")
        }
        files[name] = sorted(path.name for path in directory.iterdir())
    assert keys["ours"] == keys["transformers"]
    tensor_keys = {tuple(names) for _, names in keys["ours"]["FULL_TENSORS"] if "dtype" in names}
    assert tensor_keys == {("dtype", "max", "mean", "min", "shape", "std", "value")}
    # the same files, and our own beside them; upstream also writes files for the layers it prunes
    json_files = [name for name in files["ours"] if name.endswith(".json")]
    assert json_files == [f"SixSteps_debug_tree_{kind}.json" for kind in ("EXTRA", "FULL_TENSORS", "SUMMARY")]
    assert set(files["ours"]) - {"SixSteps_debug_tree_EXTRA.json"} <= set(files["transformers"])
    assert len(files["ours"]) == 3 + (0 if use_repr else 11 if prune else 23)  # 3 tensors per layer, 5 others
