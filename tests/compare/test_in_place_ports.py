"""A hand-written port whose module adds to its input in place where the reference returns a new tensor.

Its outputs are the reference's, but the caller still uses the tensor it passed, so the change
reaches the calls after it: compare names the module that made it, as replay does.
"""

import json

import pytest
import torch
from torch import nn

from model_debugging import compare_traces, model_addition_debugger_context, replay_trace
from model_debugging.compare.command import main


class Shift(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.full((8,), 100.0))

    def forward(self, x):
        return x + self.bias


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj, self.shift, self.out = nn.Linear(8, 8), Shift(), nn.Linear(8, 8)

    def forward(self, x):
        hidden = self.proj(x)
        shifted = self.shift(hidden)
        return self.out(hidden * 0.5 + shifted)


class Reference(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class Offset(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(torch.zeros(8))

    def forward(self, h):
        h += self.b
        return h


class PortBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.offset, self.outp = nn.Linear(8, 8), Offset(), nn.Linear(8, 8)

    def forward(self, x):
        h = self.inp(x)
        s = self.offset(h)
        return self.outp(h * 0.5 + s)


class Port(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([PortBlock(), PortBlock()])
        self.ln = nn.LayerNorm(8)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.ln(x)


def port_of(reference: Reference) -> Port:
    port = Port()
    for block, layer in zip(port.blocks, reference.layers, strict=True):
        block.inp.load_state_dict(layer.proj.state_dict())
        block.outp.load_state_dict(layer.out.state_dict())
        block.offset.b.data.copy_(layer.shift.bias.data)
    port.ln.load_state_dict(reference.norm.state_dict())
    return port.eval()


def trace(model, directory):
    with model_addition_debugger_context(model, debug_path=directory, use_repr=False, do_prune_layers=False):
        model(torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(0)))
    return directory


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    directory = tmp_path_factory.mktemp("in_place")
    torch.manual_seed(0)
    reference = Reference().eval()
    port = port_of(reference)
    return trace(reference, directory / "reference"), trace(port, directory / "port"), port


def test_the_module_that_changed_its_input_in_place_is_the_origin_as_in_replay(traces):
    reference_trace, port_trace, port = traces
    comparison = compare_traces(reference_trace, port_trace)
    origin = comparison.divergence_origin
    assert (origin.module_path, origin.candidate_path) == ("Reference.layers.0.shift", "Port.blocks.0.offset")
    assert origin.details[0] == "inputs.args.0 changed in place by the candidate only"
    assert comparison.origin_note is None
    found = replay_trace(reference_trace, port, bisect=True, comparison=comparison)
    assert found.bug_in == origin.module_path


def test_the_reports_say_which_side_changed_which_input(traces, tmp_path, capsys):
    reference_trace, port_trace, _ = traces
    code = main(
        [
            str(reference_trace),
            str(port_trace),
            "--markdown",
            str(tmp_path / "r.md"),
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 1
    printed = capsys.readouterr().out
    assert (
        "divergence origin: Reference.layers.0.shift (inputs.args.0 changed in place by the candidate only)"
        in printed
    )
    assert "inputs.args.0 changed in place by the candidate only" in (tmp_path / "r.md").read_text()
    origin = json.loads((tmp_path / "r.json").read_text())["divergence_origin"]
    assert origin["details"][0] == "inputs.args.0 changed in place by the candidate only"
    # the port taken as the reference: the other side
    assert main([str(port_trace), str(reference_trace)]) == 1
    assert "inputs.args.0 changed in place by the reference only" in capsys.readouterr().out


def test_the_same_change_in_place_on_both_sides_is_no_difference(traces, tmp_path):
    _, port_trace, port = traces
    again = trace(port_of_itself(port), tmp_path / "again")
    assert compare_traces(port_trace, again).equivalent


def port_of_itself(port: Port) -> Port:
    copy = Port()
    copy.load_state_dict(port.state_dict())
    return copy.eval()


def test_a_trace_without_our_extra_file_still_compares(traces, tmp_path):
    reference_trace, port_trace, _ = traces
    plain = tmp_path / "plain"
    plain.mkdir()
    for path in port_trace.iterdir():
        if not path.name.endswith("_EXTRA.json"):  # as upstream's debugger leaves a trace
            (plain / path.name).write_bytes(path.read_bytes())
    comparison = compare_traces(reference_trace, plain)
    assert not comparison.equivalent
    assert not any("changed in place" in detail for row in comparison.modules for detail in row.details)
