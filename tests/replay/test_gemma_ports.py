"""Replay on the hand-written ports of Gemma (a decoder): correct when correct (also in bfloat16),
and each planted bug placed where it is (see ``port_proof``)."""

import json

import pytest
import torch

from model_debugging import ReplayVerdict
from model_debugging.cli import main
from tests.ports import Style, gemma
from tests.ports.catalog import trace
from tests.replay.port_proof import (
    PortSession,
    bug_cases,
    bug_place,
    check_forgotten_call,
    full_path,
    verdict_counts,
)

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    return PortSession(gemma, tmp_path_factory.mktemp("gemma"))


@pytest.mark.parametrize("style", Style)
def test_a_correct_port_replays_correct_in_float32_and_in_bfloat16(session, style):
    for dtype in (None, torch.bfloat16):
        counts = verdict_counts(session.replay(style, dtype=dtype))
        assert counts[ReplayVerdict.WRONG] == 0, dtype
        assert counts[ReplayVerdict.CORRECT] > counts[ReplayVerdict.NOT_REPLAYED], dtype


@pytest.mark.parametrize(("style", "bug"), bug_cases("gemma"))
def test_bisection_places_each_planted_bug_where_it_is(session, style, bug):
    found = session.replay(style, bug, bisect=True)
    assert found.bug_in == full_path(found, bug_place("gemma", style, bug))


@pytest.mark.parametrize("style", Style)
def test_bisection_names_the_final_norm_the_port_forgets(session, style):
    found = session.replay(style, "FINAL_NORM_SKIPPED", bisect=True)
    if style is Style.PLAIN:  # the model's own forward skips it
        check_forgotten_call(found, "GemmaForCausalLM", "model.norm", "lm_head")
        return
    # the port's ``model`` wrapper returns without its norm: that wrapper's end is named, and the norm
    assert found.bug_in == "GemmaForCausalLM.model"
    assert found.smallest_wrong.reason.endswith(
        "the bug is at its end: the candidate never ran its last recorded call GemmaForCausalLM.model.norm: "
        "the port skips it, or computes it another way"
    )


@pytest.mark.parametrize("style", Style)
def test_a_block_wrong_after_its_last_call_is_never_called_correct(session, style):
    """Every block returns its feed-forward's output without the residual, after its last recorded
    call: each block's outputs are judged on what the next call (the next block, the final norm)
    received in the reference."""
    result = session.replay(style, "MISSING_FEED_FORWARD_RESIDUAL")
    calls = {call.module_path: call for call in result.modules}
    for layer, receiver in (("model.layers.0", "model.layers.1"), ("model.layers.1", "model.norm")):
        call = calls[full_path(result, layer)]
        assert call.verdict is ReplayVerdict.WRONG, layer
        assert call.first_wrong == f"outputs (given to {receiver} as args.0)"
    assert calls[full_path(result, "model.layers.0.mlp")].verdict is ReplayVerdict.CORRECT
    found = session.replay(style, "MISSING_FEED_FORWARD_RESIDUAL", bisect=True)
    layer = full_path(found, "model.layers.0")
    assert found.smallest_wrong.reason == (
        "its recorded submodules and functions are correct on identical inputs, but not its outputs (given "
        f"to model.layers.1 as args.0): the bug is at its end, in its last call {layer}.mlp (not recorded "
        "either) or after it"
    )


@pytest.mark.parametrize("style", Style)
def test_an_mlp_scaled_after_its_last_call_is_wrong_though_its_layer_ends_with_it(session, style):
    """Every MLP scales what ``down_proj`` returns: the MLP is its layer's last call, so what it returns
    reaches the next layer (the final norm after the last) as that less the residual, in the reference;
    the port's does not, and its layer first differs in its own outputs."""
    result = session.replay(style, "MLP_OUTPUT_SCALED")
    calls = {call.module_path: call for call in result.modules}
    for layer, receiver in (("model.layers.0", "model.layers.1"), ("model.layers.1", "model.norm")):
        mlp, parent = calls[full_path(result, f"{layer}.mlp")], full_path(result, layer)
        assert mlp.verdict is ReplayVerdict.WRONG, layer
        assert mlp.reason.endswith(
            f"and {parent} first differs in its own outputs (given to {full_path(result, receiver)}): the bug is "
            f"at its end: after its last recorded call, or in the code of {parent} after it"
        ), mlp.reason
        assert calls[f"{parent}.mlp.down_proj"].verdict is ReplayVerdict.CORRECT


def test_replay_bisect_from_the_command_line_names_the_mlp(session, tmp_path, capsys):
    """As a porter runs it: the reference's and the port's traces, the port built by a script."""
    port_trace = trace(
        gemma.port(session.reference, Style.KEYWORDS, gemma.Bug.MLP_OUTPUT_SCALED),
        tmp_path / "port",
        session.inputs,
    )
    script = tmp_path / "port.py"
    script.write_text(
        "from tests.ports import Style, gemma\n\n\n"
        "def build_model():\n"
        "    return gemma.port(gemma.reference(), Style.KEYWORDS, gemma.Bug.MLP_OUTPUT_SCALED)\n"
    )
    output = tmp_path / "replay.json"
    arguments = [
        "replay",
        str(session.trace),
        "--model",
        str(script),
        "--bisect",
        "--compare",
        str(port_trace),
    ]
    assert main([*arguments, "--json", str(output)]) == 1
    assert json.loads(output.read_text())["bug_in"] == "GemmaForCausalLM.model.layers.0.mlp"
    assert "GemmaForCausalLM.model.layers.0.mlp" in capsys.readouterr().out


def test_replay_without_compare_says_once_that_compare_would_pair_the_calls(session):
    """The keyword port fuses q, k and v: without its trace, replay cannot tell what runs between v_proj
    and o_proj, and says, once, what would."""
    result = session.replay(Style.KEYWORDS, "ROPE_SIGN", compared=False)
    explained = [call for call in result.modules if call.verdict is ReplayVerdict.WRONG and call.reason]
    assert [call.module_path for call in explained] == ["GemmaForCausalLM"]
    assert explained[0].reason == (
        "model.layers.0.self_attn.o_proj is given other inputs than recorded, and "
        "GemmaForCausalLM.model.layers.0.self_attn.v_proj, the recorded call before it, has no counterpart of "
        "its name in the candidate: replay --compare PORT_TRACE (the port's own trace) pairs the two models' "
        "calls, and names a call the port skips"
    )


@pytest.mark.parametrize("style", Style)
def test_an_attention_wrong_after_its_last_call_is_never_called_correct(session, style):
    """Every attention halves its output after its output projection: what it returns is neither what
    the next norm received nor that less the residual, and its layer first differs right there."""
    result = session.replay(style, "ATTENTION_OUTPUT_HALVED")
    calls = {call.module_path: call for call in result.modules}
    for layer in ("model.layers.0", "model.layers.1"):
        attention, parent = calls[full_path(result, f"{layer}.self_attn")], full_path(result, layer)
        assert attention.verdict is ReplayVerdict.WRONG, layer
        assert attention.reason.endswith(
            f"the bug is at its end: after its last recorded call, or in the code of {parent} between them"
        )
        assert calls[f"{parent}.self_attn.o_proj"].verdict is ReplayVerdict.CORRECT
    # a residual taken wrongly is the layer's code: the attention before it returns the right values
    wrong = session.replay(style, "RESIDUAL_FROM_NORMED")
    attention = next(
        call for call in wrong.modules if call.module_path == full_path(wrong, "model.layers.1.self_attn")
    )
    assert attention.verdict is ReplayVerdict.CORRECT
