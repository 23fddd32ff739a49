"""A tensor recorded again unchanged is not recomputed or written again; any change to its bytes is seen; no activation is kept alive longer than needed."""

import json
import weakref

import torch
from safetensors.torch import load_file
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger.trace_format.reading import read_trace


class Fanout(nn.Module):
    """A norm whose output feeds three projections, like attention's q/k/v."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)

    def forward(self, x):
        normed = self.norm(x)
        return self.q(normed) + self.k(normed) + self.v(normed)


class SwapBetween(nn.Module):
    """Swaps two elements through ``.data`` between two records: same version, same sum, same stats."""

    def __init__(self):
        super().__init__()
        self.before = nn.Identity()
        self.after = nn.Identity()

    def forward(self, x):
        self.before(x)
        x.data[0], x.data[1] = x.data[1].clone(), x.data[0].clone()
        return self.after(x)


def trace(tmp_path, model, value, use_repr):
    with model_addition_debugger_context(
        model, debug_path=tmp_path, use_repr=use_repr, do_prune_layers=False
    ):
        model(value)
    return json.loads((tmp_path / f"{type(model).__name__}_debug_tree_FULL_TENSORS.json").read_text())


def test_a_tensor_feeding_three_modules_is_written_once(tmp_path):
    tree = trace(tmp_path, Fanout(), torch.randn(2, 4, 8), use_repr=False)
    norm, q, k, v = tree["children"]
    names = [node["inputs"]["args"][0]["value"][2:] for node in (q, k, v)]
    assert names == [
        "Fanout.q_inputs_args_0.safetensors",
        "Fanout.k_inputs_args_0.safetensors",
        "Fanout.v_inputs_args_0.safetensors",
    ]
    written = tmp_path / norm["outputs"]["value"][2:]
    for name in names:  # each name upstream gives it, the same file (one inode) behind them
        assert (tmp_path / name).read_bytes() == written.read_bytes()
        assert (tmp_path / name).stat().st_ino == written.stat().st_ino
    for node in (q, k, v):
        assert {key: value for key, value in node["inputs"]["args"][0].items() if key != "value"} == {
            key: value for key, value in norm["outputs"].items() if key != "value"
        }


def test_a_change_keeping_version_and_statistics_is_recorded(tmp_path):
    for use_repr in (True, False):
        directory = tmp_path / str(use_repr)
        tree = trace(directory, SwapBetween(), torch.tensor([1.0, 2.0, 3.0]), use_repr)
        before, after = (node["inputs"]["args"][0] for node in tree["children"])
        assert before["mean"] == after["mean"]
        records = [node.inputs[0] for node in read_trace(directory).nodes[1:]]
        assert records[0].statistics == records[1].statistics
        if use_repr:
            assert (before["value"], after["value"]) == (
                ["tensor([1.0000e+00, 2.0000e+00, 3.0000e+00])"],
                ["tensor([2.0000e+00, 1.0000e+00, 3.0000e+00])"],
            )
        else:
            assert load_file(directory / after["value"][2:])["data"].tolist() == [2.0, 1.0, 3.0]
            assert load_file(directory / before["value"][2:])["data"].tolist() == [1.0, 2.0, 3.0]


def test_without_hard_links_the_file_is_copied(tmp_path, monkeypatch):
    def no_links(source, destination):
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr("os.link", no_links)
    tree = trace(tmp_path, Fanout(), torch.randn(2, 4, 8), use_repr=False)
    norm, q, _, _ = tree["children"]
    written, copied = tmp_path / norm["outputs"]["value"][2:], tmp_path / q["inputs"]["args"][0]["value"][2:]
    assert copied.read_bytes() == written.read_bytes()
    assert copied.stat().st_ino != written.stat().st_ino
    assert not list(tmp_path.glob(".*"))  # no temporary left behind


class SliceBeforeHead(nn.Module):
    """Takes a full slice (a new view of the same memory) of the norm's output, as a causal LM does."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 8)

    def forward(self, x):
        normed = self.norm(x)
        return self.head(normed[:, 0:, :])


def test_a_new_view_of_the_same_memory_is_written_once(tmp_path):
    tree = trace(tmp_path, SliceBeforeHead(), torch.randn(2, 4, 8), use_repr=False)
    norm, head = tree["children"]
    written, named = (
        tmp_path / norm["outputs"]["value"][2:],
        tmp_path / head["inputs"]["args"][0]["value"][2:],
    )
    assert named.name == "SliceBeforeHead.head_inputs_args_0.safetensors"
    assert named.stat().st_ino == written.stat().st_ino


class DropsWhatItRecorded(nn.Module):
    """Frees each intermediate once used and checks, from inside the forward, that it is gone."""

    def __init__(self):
        super().__init__()
        self.first = nn.Identity()
        self.second = nn.Identity()

    def forward(self, x):
        intermediate = self.first(x * 2.0)
        watched = weakref.ref(intermediate)
        result = self.second(intermediate + 1.0)
        del intermediate
        self.freed = watched() is None
        return result


def test_a_recorded_tensor_the_model_frees_is_not_kept_alive(tmp_path):
    model = DropsWhatItRecorded()
    for use_repr in (True, False):
        trace(tmp_path / str(use_repr), model, torch.randn(4, 8), use_repr)
        assert model.freed


def test_a_change_through_numpy_after_a_copy_on_write_snapshot_is_seen(tmp_path):
    class NumpyWrite(SwapBetween):
        def forward(self, x):
            self.before(x)
            x.numpy()[0] = 5.0  # no version bump; the snapshot must still hold the old bytes
            return self.after(x)

    tree = trace(tmp_path, NumpyWrite(), torch.tensor([1.0, 2.0, 3.0]), use_repr=True)
    before, after = (node["inputs"]["args"][0]["value"] for node in tree["children"])
    assert (before, after) == (
        ["tensor([1.0000e+00, 2.0000e+00, 3.0000e+00])"],
        ["tensor([5.0000e+00, 2.0000e+00, 3.0000e+00])"],
    )


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Identity()
        self.second = nn.Identity()

    def forward(self, x, previous):
        inner = self.first(x * 2.0)
        self.inner = weakref.ref(inner)
        self.previous_freed = previous is None or previous.inner() is None
        return self.second(inner + 1.0)


class ThreeBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(3))

    def forward(self, x):
        previous = None
        for layer in self.layers:
            x, previous = layer(x, previous), layer
        return x


def test_a_middle_block_frees_its_tensors_once_the_next_block_runs(tmp_path):
    model = ThreeBlocks()
    with model_addition_debugger_context(model, debug_path=tmp_path):
        model(torch.randn(4, 8))
    # layers.1 is held by reference (likely pruned) until layers.2 has started a child call
    assert model.layers[2].previous_freed
    tree = json.loads((tmp_path / "ThreeBlocks_debug_tree_SUMMARY.json").read_text())
    assert [child["module_path"] for child in tree["children"]] == [
        "ThreeBlocks.layers.0",
        "ThreeBlocks.layers.2",
    ]
