"""compare on a porter's first traces (``use_repr=True``): the reference traced by transformers' own
debugger, the hand-written Gemma port by ours, 40 tokens (tensors of 2,560 elements, of which the
repr prints the corners only). A module changed after its last recorded call is named from the
statistics and printed values; from summary files alone (no printed values) it is not guessed."""

import shutil

import pytest

from model_debugging import model_addition_debugger_context
from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style, gemma
from tests.ports.gemma import Bug

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "GemmaForCausalLM"
ORIGINS = {
    Bug.NONE: None,
    Bug.ATTENTION_OUTPUT_HALVED: "model.layers.0.self_attn",
    Bug.MLP_OUTPUT_SCALED: "model.layers.0.mlp",
    Bug.RESIDUAL_FROM_NORMED: "model.layers.1",  # the layer's own code adds the wrong residual
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    from transformers.model_debugging_utils import model_addition_debugger_context as upstream_context

    directory = tmp_path_factory.mktemp("summary")
    reference, input_ids = gemma.reference(), gemma.inputs(tokens=40)
    with upstream_context(reference, debug_path=str(directory / "reference"), do_prune_layers=False):
        reference(input_ids)
    for bug in ORIGINS:
        port = gemma.port(reference, Style.PLAIN, bug)
        with model_addition_debugger_context(
            port, debug_path=str(directory / bug.name), do_prune_layers=False
        ):
            port(input_ids)
    return directory


@pytest.mark.parametrize("bug", list(ORIGINS), ids=lambda bug: bug.name.lower())
def test_the_corners_and_statistics_name_the_module_changed_at_its_end(traces, bug, tmp_path):
    assert not list(traces.glob("*/*.safetensors"))
    code, result, printed = run_compare(traces / "reference", traces / bug.name, tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    assert "use_repr=False would" not in (result["origin_note"] or "")


@pytest.mark.parametrize("bug", list(ORIGINS), ids=lambda bug: bug.name.lower())
def test_from_summary_files_alone_the_layer_is_named_with_the_end_it_cannot_rule_out(traces, bug, tmp_path):
    """``_SUMMARY.json`` files hold statistics, no printed values: a sum cannot be confirmed, so the
    layer stays the origin and the note names the module's end beside its own code."""
    summaries = []
    for name in ("reference", bug.name):
        kept = tmp_path / name
        kept.mkdir()
        for path in (traces / name).glob("*_SUMMARY.json"):
            shutil.copy(path, kept)
        summaries.append(kept)
    code, result, printed = run_compare(*summaries, tmp_path / "result.json")
    if bug is Bug.NONE:
        check_verdict(result, code, ROOT, None, printed)
        return
    layer = "model.layers.1" if bug is Bug.RESIDUAL_FROM_NORMED else "model.layers.0"
    check_verdict(result, code, ROOT, layer, printed)
    module = {Bug.MLP_OUTPUT_SCALED: "mlp", Bug.ATTENTION_OUTPUT_HALVED: "self_attn"}.get(bug, "self_attn")
    last = {"mlp": "down_proj", "self_attn": "o_proj"}[module]
    assert result["origin_note"].endswith(
        f"; or at the end of {ROOT}.{layer}.{module}, after its last recorded call {ROOT}.{layer}.{module}.{last} "
        "(its outputs are not recorded): summary traces cannot tell which (traces recorded with use_repr=False would)"
    ), result["origin_note"]
