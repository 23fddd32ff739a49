"""Replay on a GPT-2 port written as nanoGPT writes it (tests/ports/gpt2.py), with no argument adapter,
as a porter first runs it: its ``Block(x)`` and ``CausalSelfAttention(x)`` are called as the port's
own trace recorded them, each bug is placed where it is, and the port's ``transformer`` (an
``nn.ModuleDict``, never called) is looked through, not blamed on a missing adapter."""

import pytest

from model_debugging import ReplayVerdict, compare_traces, replay_trace
from model_debugging.replay.rendering import render_terminal
from tests.ports import gpt2
from tests.ports.catalog import trace
from tests.replay.port_proof import check_forgotten_call

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "GPT2LMHeadModel"


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gpt2")
    reference = gpt2.reference()
    return reference, trace(reference, directory / "reference", gpt2.inputs()), directory


@pytest.mark.parametrize(
    ("bug", "place"),
    [
        (gpt2.Bug.UNTRANSPOSED_PROJ, "transformer.h.0.attn.c_proj"),
        (gpt2.Bug.EXACT_GELU, "transformer.h.0.mlp.act"),
    ],
    ids=lambda value: getattr(value, "name", value),
)
def test_bisection_places_each_bug_without_adapters(session, bug, place):
    reference, reference_trace, directory = session
    port = gpt2.port(reference, bug=bug)
    port_trace = trace(port, directory / bug.name, gpt2.port_inputs())
    found = replay_trace(
        reference_trace, port, bisect=True, comparison=compare_traces(reference_trace, port_trace)
    )
    assert found.bug_in == f"{ROOT}.{place}"
    container = next(call for call in found.modules if call.module_path == f"{ROOT}.transformer")
    assert container.verdict is ReplayVerdict.NOT_REPLAYED
    assert container.reason == (
        "the candidate's transformer (ModuleDict) is a container that is never called: "
        "its parent's forward runs what it holds"
    )


def test_the_report_of_a_correct_port_says_compare_found_no_divergence(session):
    reference, reference_trace, directory = session
    port = gpt2.port(reference)
    comparison = compare_traces(reference_trace, trace(port, directory / "correct", gpt2.port_inputs()))
    assert comparison.equivalent
    report = render_terminal(replay_trace(reference_trace, port, comparison=comparison), comparison)
    assert "compare alone: no divergence\n" in report


def test_a_port_that_projects_only_the_last_position_is_wrong_in_its_own_code(session):
    """nanoGPT's forward without targets hands its lm_head the last position only: as compare says,
    the model's own code differs there (the lm_head's input is not the reference's, expanded)."""
    reference, reference_trace, directory = session
    port = gpt2.port(reference)
    comparison = compare_traces(reference_trace, trace(port, directory / "inference", gpt2.inputs()))
    found = replay_trace(reference_trace, port, bisect=True, comparison=comparison)
    assert found.bug_in == ROOT
    root = next(call for call in found.modules if call.module_path == ROOT)
    assert root.verdict is ReplayVerdict.WRONG and root.first_wrong == "lm_head inputs.args.0"
    assert "lm_head inputs.args.0: shape [2, 1, 32] where the reference's is [2, 8, 32]" in root.details


def test_bisection_names_ln_f_the_port_forgets(session):
    reference, reference_trace, directory = session
    port = gpt2.port(reference, bug=gpt2.Bug.FINAL_NORM_SKIPPED)
    port_trace = trace(port, directory / "no_ln_f", gpt2.port_inputs())
    comparison = compare_traces(reference_trace, port_trace)
    found = replay_trace(reference_trace, port, bisect=True, comparison=comparison)
    check_forgotten_call(found, ROOT, "transformer.ln_f", "lm_head")


def test_replay_without_compare_names_ln_f_the_port_holds_but_never_calls(session):
    """A porter's first run, without the port's trace: the model is wrong from the lm_head's inputs on,
    and the reference's ln_f, held by the port under the same name, never ran: the report says so."""
    reference, reference_trace, _ = session
    port = gpt2.port(reference, bug=gpt2.Bug.FINAL_NORM_SKIPPED)
    result = replay_trace(reference_trace, port)
    root = next(call for call in result.modules if call.module_path == ROOT)
    assert root.verdict is ReplayVerdict.WRONG and root.first_wrong == "lm_head inputs.args.0"
    assert root.reason == (
        f"{ROOT}.transformer.ln_f (the candidate's transformer.ln_f), the recorded call just before lm_head, "
        "was never called: the port skips it, or computes it another way"
    )
    assert f"why (1) ------- {ROOT}: {root.reason}" in " ".join(render_terminal(result).split())
    correct = replay_trace(reference_trace, gpt2.port(reference))
    assert all(
        call.reason is None for call in correct.modules if call.verdict is not ReplayVerdict.NOT_REPLAYED
    )
