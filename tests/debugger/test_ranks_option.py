"""The debugger's ``ranks`` and ``only_modules`` options in one process (the multi-process runs are in
test_distributed.py and test_tensor_parallel.py)."""

import json
import re

import pytest
import torch
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import TraceError


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.proj = nn.Linear(4, 4)

    def forward(self, hidden):
        return self.proj(self.norm(hidden))


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.layers = nn.ModuleList(Block() for _ in range(3))
        self.head = nn.Linear(4, 10)

    def forward(self, ids):
        hidden = self.embed(ids)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.head(hidden)


def _paths(node: dict) -> list[str]:
    return [node["module_path"]] + [path for child in node.get("children", ()) for path in _paths(child)]


def _summary(directory):
    return json.loads((directory / "Stack_debug_tree_SUMMARY.json").read_text())


def test_only_modules_records_the_matching_modules_and_what_runs_inside_them(tmp_path):
    with model_addition_debugger_context(
        Stack(), tmp_path, do_prune_layers=False, only_modules=r"layers\.1$"
    ) as model:
        model(torch.tensor([[1, 2, 3]]))
    assert _paths(_summary(tmp_path)) == [
        "Stack",
        "Stack.layers.1",
        "Stack.layers.1.norm",
        "Stack.layers.1.proj",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"only_modules": r"decoder\.layers"},
            r"only_modules='decoder\\.layers' matches no module path of Stack",
        ),
        ({"only_modules": "layers.(1"}, "only_modules='layers.(1' is not a regular expression"),
        ({"ranks": "1"}, r"ranks='1' is not one of '0', 'all', 'gathered'"),
        ({"ranks": 0}, r"ranks=0 is not one of '0', 'all', 'gathered'"),
    ],
)
def test_a_bad_option_is_refused_before_anything_is_written(tmp_path, options, message):
    model = Stack()
    with (
        pytest.raises(ValueError, match=re.escape(message)),
        model_addition_debugger_context(model, tmp_path / "out", **options),
    ):
        pass
    assert not (tmp_path / "out").exists()
    assert "forward" not in model.__dict__


def test_without_a_process_group_every_rank_is_this_one(tmp_path):
    ids = torch.tensor([[1, 2, 3]])
    with model_addition_debugger_context(Stack(), tmp_path / "all", ranks="all") as model:
        model(ids)
    with model_addition_debugger_context(Stack(), tmp_path / "gathered", ranks="gathered") as model:
        model(ids)
    extra = json.loads((tmp_path / "all" / "rank0" / "Stack_debug_tree_EXTRA.json").read_text())
    assert extra["distributed"] == {"ranks": "all", "rank": 0, "world_size": 1}
    assert read_trace(tmp_path / "all" / "rank0").distributed.world_size == 1
    # one process gathers nothing: the trace is the default one
    assert "distributed" not in json.loads(
        (tmp_path / "gathered" / "Stack_debug_tree_EXTRA.json").read_text()
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda extra: extra["distributed"].update(world_size="2"),
            "distributed.world_size is str '2', expected an integer",
        ),
        (
            lambda extra: extra["tree"]["children"][0]["tensors"][0].update(
                placement={"placements": "Shard(dim=0)"}
            ),
            r"node #1 'Stack.embed': tensors\[0\].placement.placements is str 'Shard\(dim=0\)', expected a list of strings",
        ),
    ],
)
def test_a_malformed_distributed_record_is_named(tmp_path, change, message):
    with model_addition_debugger_context(Stack(), tmp_path, ranks="all") as model:
        model(torch.tensor([[1, 2, 3]]))
    path = tmp_path / "rank0" / "Stack_debug_tree_EXTRA.json"
    extra = json.loads(path.read_text())
    extra["tree"]["children"][0]["tensors"] = [
        {"placement": {"placements": ["Replicate()"], "source": "dtensor"}},
        {},
    ]
    change(extra)
    path.write_text(json.dumps(extra))
    with pytest.raises(TraceError, match=message) as raised:
        read_trace(tmp_path / "rank0")
    assert str(path) in str(raised.value)
