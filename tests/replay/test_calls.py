"""Calls a port cannot take as the reference's were made: said so (in the terminal), adapted, never blamed.

The port is the plain-style Gemma port of ``tests/ports`` (``Block(x, cos, sin, mask)``, a boolean
mask, fused projections, no ``model`` wrapper), given to ``--model`` as a script the way a porter
writes one, with and without argument adapters. Without adapters its blocks are called as its own
trace recorded them (a derived adapter: the reference's 4-D additive mask converted to the port's
``[8, 8]`` boolean one, checked against the port's own); with a port trace of statistics only
(``use_repr=True``) that conversion cannot be checked, and the blocks cannot be called.
"""

import json
import sys
import textwrap

import pytest

from model_debugging.cli import main
from tests.ports import Style, gemma
from tests.ports.catalog import trace

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

SCRIPT = """
from tests.ports import Style, gemma

def build_model():
    return gemma.port(gemma.reference(), Style.PLAIN, gemma.Bug.{bug})
"""
ADAPTERS = """
def block_arguments(block, hidden_states, attention_mask=None, position_embeddings=None, **_):
    cos, sin = position_embeddings
    return (hidden_states, cos[:, None], sin[:, None], attention_mask == 0), {}

REPLAY_ADAPTERS = {gemma.Block: block_arguments, "blocks.*.attn": block_arguments}
"""


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """The reference's trace and the plain ports' (correct, and with two residual bugs), for --compare."""
    directory = tmp_path_factory.mktemp("gemma")
    reference = gemma.reference()
    ports = {
        (bug, summary): trace(
            gemma.port(reference, Style.PLAIN, gemma.Bug[bug]),
            directory / f"{bug}-{summary}",
            gemma.inputs(),
            use_repr=summary,
        )
        for bug in ("NONE", "RESIDUAL_FROM_NORMED", "MISSING_FEED_FORWARD_RESIDUAL")
        for summary in (False, True)
    }
    return trace(reference, directory / "reference", gemma.inputs()), ports


def script(tmp_path, bug="NONE", adapters=False):
    path = tmp_path / "port.py"
    path.write_text(textwrap.dedent(SCRIPT.format(bug=bug)) + (ADAPTERS if adapters else ""))
    return str(path)


def replay_command(traces, model, *options, bug="NONE", summary=False):
    """``model-debugging replay`` with ``--compare`` the port's trace (``summary``: of statistics only)."""
    reference, ports = traces
    port_trace = ports[bug, summary]
    return main(["replay", str(reference), "--model", model, "--compare", str(port_trace), *options])


def test_a_call_the_port_cannot_take_is_not_replayed_and_the_terminal_says_why(traces, tmp_path, capsys):
    assert replay_command(traces, script(tmp_path), "--module", "model.layers.0", summary=True) == 2
    captured = capsys.readouterr()
    out = " ".join(captured.out.split())  # the report is wrapped to the terminal's width
    assert "0 wrong on identical inputs, 1 not replayed" in out
    assert (
        "GemmaForCausalLM.model.layers.0: blocks.0 (Block).forward(x, cos, sin, mask) does not accept" in out
    )
    assert "missing a required argument: 'cos'" in out
    assert "give replay an argument adapter" in out
    assert (
        "nor can it be called as its own model called it: mask (args.3 [8, 8] torch.bool) has no derivable "
        "value: the port's trace records it without its values, so no conversion can be checked: trace "
        "the port with use_repr=False"
    ) in out
    assert captured.err.strip().endswith(
        "no call could be replayed on the candidate (1 tried; reasons above)"
    )


def test_a_block_taking_its_mask_in_another_form_is_called_as_its_own_model_called_it(
    traces, tmp_path, capsys
):
    assert replay_command(traces, script(tmp_path), "--module", "model.layers.0") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 correct on identical inputs, 0 wrong on identical inputs, 0 not replayed" in out
    assert (
        "calls made through a derived adapter, without one written by hand (1) "
        "--------------------------------------------------------------------- "
        "GemmaForCausalLM.model.layers.0: blocks.0 called as the port's own model called it (its trace), on "
        "the reference's values; converted to its form, as its own run was given them: mask = the "
        "reference's attention_mask [2, 1, 8, 8] torch.float32 as [8, 8] torch.bool"
    ) in out


def test_an_argument_adapter_defined_beside_build_model_makes_the_call(traces, tmp_path, capsys):
    model = script(tmp_path, adapters=True)
    assert (
        replay_command(traces, model, "--module", "model.layers.0", "--module", "model.layers.1.self_attn")
        == 0
    )
    assert "2 correct on identical inputs, 0 wrong on identical inputs, 0 not replayed" in " ".join(
        capsys.readouterr().out.split()
    )


@pytest.mark.parametrize(
    ("adapters", "summary", "bug_in"),
    [
        # the block cannot be called: the bug is placed in the smallest call replay could make,
        # and the block is named only as where the first difference lies
        (False, True, "GemmaForCausalLM"),
        # called as the port's own model called it (a derived adapter), or through a hand-written one
        (False, False, "GemmaForCausalLM.model.layers.1"),
        (True, False, "GemmaForCausalLM.model.layers.1"),
    ],
)
def test_bisection_never_blames_a_module_it_could_not_call(
    traces, tmp_path, capsys, adapters, summary, bug_in
):
    model = script(tmp_path, "RESIDUAL_FROM_NORMED", adapters)
    json_path = tmp_path / "result.json"
    options = ["--bisect", "--json", str(json_path)]
    assert replay_command(traces, model, *options, bug="RESIDUAL_FROM_NORMED", summary=summary) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f'"bug_in": "{bug_in}"' in json_path.read_text()
    assert f"smallest module wrong on identical inputs: {bug_in}" in out
    (block,) = [
        call
        for call in json.loads(json_path.read_text())["modules"]
        if call["module_path"] == "GemmaForCausalLM.model.layers.1"
    ]
    # a hand-written adapter wins over the derived one
    assert (block["called_as"] is None) is (adapters or summary), block["called_as"]
    if summary:
        assert "lies in GemmaForCausalLM.model.layers.1, which could not be replayed alone" in out
        assert "the bug is in its own code or in what it is given" in out
    else:
        assert (
            "the bug is in its own code, before model.layers.1.post_attention_layernorm inputs.args.0" in out
        )


TOY_PORT = """
import torch
from torch import nn

from toy_sizes import HIDDEN, WIDE  # a sibling file, imported when the script is loaded


def scale_and_shift(x, block, factor=2.0):  # found by replay in the module defining Block
    return x * factor * block.gain


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in, self.fc_out = nn.Linear(HIDDEN, WIDE), nn.Linear(WIDE, HIDDEN)
        self.gain = nn.Parameter(torch.ones(WIDE))

    def forward(self, x, scale=True, mode="plain"):
        hidden = self.fc_in(x)
        if scale:
            hidden = scale_and_shift(hidden, self, factor=0.5)
        return x + self.fc_out(torch.nn.functional.softmax(hidden, dim=-1))


class Toy(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.blocks = nn.Linear(4, HIDDEN), nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(HIDDEN, 2)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x, scale=True, mode="plain")
        return self.head(x)


def build_model():
    from toy_weights import load  # a sibling file, imported only when the model is built

    return load(Toy()).eval()
"""
TOY_SIZES = """
HIDDEN, WIDE = 8, 16
"""
TOY_WEIGHTS = """
from tests.replay import toys


def load(model):
    model.load_state_dict(toys.build_model().state_dict())
    return model
"""


def test_a_model_script_is_a_real_module_with_its_folder_importable_for_the_whole_run(tmp_path, capsys):
    from tests.replay import toys
    from tests.replay.test_command import trace_toy

    reference = trace_toy(toys.build_model(), tmp_path / "reference")
    folder = tmp_path / "port"
    folder.mkdir()
    for name, text in (("toy_port", TOY_PORT), ("toy_sizes", TOY_SIZES), ("toy_weights", TOY_WEIGHTS)):
        (folder / f"{name}.py").write_text(textwrap.dedent(text))
    path_before = list(sys.path)

    assert main(["replay", str(reference), "--model", str(folder / "toy_port.py")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # the recorded helper is found in the script that defines the candidate's classes
    assert "11 correct on identical inputs, 0 wrong on identical inputs, 0 not replayed" in out
    assert sys.path == path_before and "toy_port" not in sys.modules


def test_a_difference_entering_an_uncallable_block_points_at_the_end_of_the_block_before(
    traces, tmp_path, capsys
):
    """Every block forgets its feed-forward residual, at its end, after its last recorded call:
    the difference is first seen in the inputs of layer 1's first call, so layer 0's end is named."""
    model = script(tmp_path, "MISSING_FEED_FORWARD_RESIDUAL")
    assert replay_command(traces, model, "--bisect", bug="MISSING_FEED_FORWARD_RESIDUAL", summary=True) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "smallest module wrong on identical inputs: GemmaForCausalLM " in out
    assert (
        "the bug is in its own code or in what it is given: already in the inputs of the first call inside "
        "it, so likely in the outputs of GemmaForCausalLM.model.layers.0 (not recorded), made at its end"
    ) in out


def test_a_difference_made_in_a_blocks_last_call_with_calls_of_its_own_names_that_call(tmp_path, capsys):
    """The Mixtral port's router does not renormalise its weights: the difference is made in each
    layer's expert call (``mlp``), whose outputs are not recorded: the first layer is wrong on its
    outputs (the second layer's recorded inputs), and its last call is named, not only its end."""
    from tests.ports import mixtral

    reference = mixtral.reference()
    reference_trace = trace(reference, tmp_path / "reference", mixtral.inputs())
    bug = mixtral.Bug.ROUTER_NOT_RENORMALIZED
    port_trace = trace(mixtral.port(reference, Style.PLAIN, bug), tmp_path / "port", mixtral.inputs())
    model = tmp_path / "port.py"
    model.write_text(
        "from tests.ports import Style, mixtral\n\n\ndef build_model():\n"
        f"    return mixtral.port(mixtral.reference(), Style.PLAIN, mixtral.Bug.{bug.name})\n"
    )
    arguments = [
        "replay",
        str(reference_trace),
        "--model",
        str(model),
        "--compare",
        str(port_trace),
        "--bisect",
    ]
    assert main(arguments) == 1
    out = " ".join(capsys.readouterr().out.split())
    layer = "MixtralForCausalLM.model.layers.0"
    assert f"bisection: smallest module wrong on identical inputs: {layer} " in out
    assert (
        "but not its outputs (given to model.layers.1 as args.0): the bug is at its end, in its last call "
        f"{layer}.mlp (not recorded either), whose own last call {layer}.mlp.experts has no counterpart in the "
        "candidate and records no outputs, so replay cannot check it alone, or after it"
    ) in out
