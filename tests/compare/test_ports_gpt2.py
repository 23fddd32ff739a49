"""compare, with its defaults and no rename file, on a GPT-2 port written as nanoGPT writes it
(tests/ports/gpt2.py): a fused ``c_attn`` Linear against the reference's Conv1D, its own ``LayerNorm``
module, ``F.scaled_dot_product_attention``, an ``lm_head`` tied to ``wte``."""

import pytest

from tests.compare.port_checks import check_rules_round_trip, check_skipped_call, check_verdict, run_compare
from tests.ports import Style, gpt2
from tests.ports.catalog import trace
from tests.ports.gpt2 import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "GPT2LMHeadModel"
ORIGINS = {
    Bug.NONE: None,
    Bug.UNTRANSPOSED_PROJ: "transformer.h.0.attn.c_proj",  # a Linear against the Conv1D it was converted from
    Bug.EXACT_GELU: "transformer.h.0.mlp.act",  # nn.GELU() against NewGELUActivation
    Bug.SCALE_BY_HEAD_DIM: "transformer.h.0.attn",
    Bug.MASK_OFF_BY_ONE: "transformer.h.0.attn",
    Bug.FINAL_NORM_SKIPPED: "",  # ln_f is never called: the note names the reference's first
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("gpt2"))


@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("gpt2", Style.PLAIN, bug), tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    if bug is Bug.FINAL_NORM_SKIPPED:
        check_skipped_call(result, f"{ROOT}.transformer.ln_f", f"{ROOT}.lm_head")
    if bug in (Bug.SCALE_BY_HEAD_DIM, Bug.MASK_OFF_BY_ONE):  # between the fused c_attn and c_proj
        assert result["origin_note"].endswith(
            f"before {ROOT}.transformer.h.0.attn.c_proj (the first call in "
            "it whose inputs differ): in its own code"
        ), result["origin_note"]


def test_a_port_that_projects_only_the_last_position_is_told_so(traces, tmp_path):
    """nanoGPT's forward without targets gives the logits of the last position only: the origin is
    the model's own code, and the line says the port's lm_head got the reference's last position
    (not a difference of 5 in values)."""
    reference_trace, _ = traces.get("gpt2", Style.PLAIN, Bug.NONE)
    port = gpt2.port(gpt2.reference())
    port_trace = trace(port, tmp_path / "inference", gpt2.inputs())
    code, result, printed = run_compare(reference_trace, port_trace, tmp_path / "result.json")
    check_verdict(result, code, ROOT, "", printed)
    line = next(line for line in printed.splitlines() if line.startswith("divergence origin:"))
    assert (
        f"the inputs of {ROOT}.lm_head differ: inputs.args.0 (shape [2, 8, 32] vs [2, 1, 32]: the candidate "
        "holds only the reference's [:, 7:8], equal there)"
    ) in line


def test_the_inferred_alignment_passed_back_as_rules_gives_the_same_verdict(traces, tmp_path):
    check_rules_round_trip(*traces.get("gpt2", Style.PLAIN, Bug.EXACT_GELU), tmp_path)


def test_from_summary_statistics_the_skipped_final_norm_is_named_first(tmp_path):
    """Traces with values as statistics only (use_repr=True): the same tensor has the same statistics,
    so the reference's ln_f is still told as what made lm_head's input."""
    reference = gpt2.reference()
    port = gpt2.port(reference, Style.PLAIN, Bug.FINAL_NORM_SKIPPED)
    traces = [
        trace(model, tmp_path / name, inputs, use_repr=True)
        for model, name, inputs in (
            (reference, "reference", gpt2.inputs()),
            (port, "port", gpt2.port_inputs()),
        )
    ]
    code, result, printed = run_compare(*traces, tmp_path / "result.json")
    check_verdict(result, code, ROOT, "", printed)
    assert result["mode"] == "stats"
    check_skipped_call(result, f"{ROOT}.transformer.ln_f", f"{ROOT}.lm_head")
