"""compare, with its defaults and no rename file, on hand-written T5 ports (tests/ports/t5.py):
each correct port is equivalent and each planted bug is found where it is."""

import pytest

from tests.compare.port_checks import check_rules_round_trip, check_verdict, run_compare
from tests.ports import Style
from tests.ports.t5 import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "T5ForConditionalGeneration"
ORIGINS = {
    Bug.NONE: None,
    Bug.SWAPPED_FUSED_HALVES: "decoder.block.1.layer.2.DenseReluDense.wi_0",
    Bug.SWAPPED_CROSS_KV: "decoder.block.1.layer.1.EncDecAttention.k",
    Bug.MASK_OFF_BY_ONE: "decoder",  # the decoder's own code makes the causal mask
    Bug.ATTENTION_SCALE: "encoder.block.0.layer.0.SelfAttention",
    Bug.NORM_SUBTRACTS_MEAN: "decoder.block.1.layer.1.layer_norm",
    Bug.RESIDUAL_FROM_NORMED: "decoder.block.1",
    # inside the reference's T5LayerFF (a norm, the feed-forward, the residual), at the feed-forward's end
    Bug.FEED_FORWARD_OUTPUT_HALVED: "encoder.block.0.layer.1.DenseReluDense",
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("t5"))


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, style, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("t5", style, bug), tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    if bug is Bug.MASK_OFF_BY_ONE:
        labels = {
            Style.PLAIN: "inputs.args.1 / args.3",
            Style.KEYWORDS: "inputs.args.1 / kwargs.attention_mask",
        }
        assert f"the inputs of {ROOT}.decoder.block.0 differ: {labels[style]}" in printed


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize(
    "bug",
    [Bug.NONE, Bug.FEED_FORWARD_OUTPUT_HALVED, Bug.RESIDUAL_FROM_NORMED],
    ids=lambda bug: bug.name.lower(),
)
def test_summary_traces_tell_the_feed_forward_changed_at_its_end(traces, style, bug, tmp_path):
    """With the debugger's default (``use_repr=True``) the statistics and printed values tell that the
    feed-forward halves what ``wo`` returns, as the tensor files do."""
    code, result, printed = run_compare(*traces.get("t5", style, bug, summary=True), tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)


@pytest.mark.parametrize("style", list(Style), ids=str)
def test_a_bias_computed_once_and_moved_embeddings_are_paired_or_noted(traces, style, tmp_path):
    code, result, _ = run_compare(*traces.get("t5", style, Bug.NONE), tmp_path / "result.json")
    assert code == 0
    pairs = {module["module_path"]: module["candidate_path"] for module in result["modules"]}
    stack = {Style.PLAIN: "relative_bias", Style.KEYWORDS: "relative_attention_bias"}[style]
    bias = f"{ROOT}.decoder.block.0.layer.0.SelfAttention.relative_attention_bias"
    assert pairs[bias].endswith(f".decoder.{stack}")  # computed in the first block's attention vs per stack
    assert pairs[f"{ROOT}.encoder.embed_tokens"].rsplit(".", 1)[-1] in ("embed", "shared")
    block = next(module for module in result["modules"] if module["module_path"] == f"{ROOT}.decoder.block.0")
    notes = " ".join(block["notes"])
    assert "passed by the candidate only" in notes  # the bias handed to the first block


@pytest.mark.parametrize("style", list(Style), ids=str)
def test_after_a_bug_a_wrapper_is_never_paired_with_only_a_part_of_itself(traces, style, tmp_path):
    """T5LayerSelfAttention and T5LayerFF (a norm, the sublayer, dropout and the residual) are looked
    through in every block, as where the values agree: the port's sublayer pairs with the sublayer."""
    _, result, _ = run_compare(*traces.get("t5", style, Bug.ATTENTION_SCALE), tmp_path / "result.json")
    pairs = {module["module_path"]: module["candidate_path"] for module in result["modules"]}
    attention = {Style.PLAIN: "attn", Style.KEYWORDS: "self_attn"}[style]
    for block in (0, 1):
        assert f"{ROOT}.encoder.block.{block}.layer.0" not in pairs
        assert f"{ROOT}.encoder.block.{block}.layer.1" not in pairs
        assert pairs[f"{ROOT}.encoder.block.{block}.layer.0.SelfAttention"].endswith(f".{block}.{attention}")
    assert not [path for path in result["unmatched_candidate"] if "norm" in path]


def test_with_gelu_recorded_the_activation_module_pairs_with_the_function(traces, tmp_path):
    code, result, printed = run_compare(
        *traces.get("t5", Style.PLAIN, Bug.NONE, functions=True), tmp_path / "r.json"
    )
    check_verdict(result, code, ROOT, None, printed)
    pairs = {module["module_path"]: module["candidate_path"] for module in result["modules"]}
    assert pairs[f"{ROOT}.encoder.block.0.layer.1.DenseReluDense.act"] == "PlainT5.encoder.blocks.0.ffn.gelu"


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", [Bug.NONE, Bug.MASK_OFF_BY_ONE], ids=lambda bug: bug.name.lower())
def test_the_inferred_alignment_passed_back_as_rules_gives_the_same_verdict(traces, style, bug, tmp_path):
    check_rules_round_trip(*traces.get("t5", style, bug), tmp_path)
