"""A tensor recorded again unchanged is not recomputed or written again; any change to its bytes is seen."""

import json

import torch
from safetensors.torch import load_file
from torch import nn

from model_debugging import model_addition_debugger_context


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
        assert before["mean"] == after["mean"] and before["statistics"] == after["statistics"]
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
