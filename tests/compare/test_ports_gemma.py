"""compare, with its defaults and no rename file, on hand-written Gemma ports (tests/ports/gemma.py):
each correct port is equivalent and each planted bug is found where it is."""

import pytest

from tests.compare.port_checks import check_rules_round_trip, check_skipped_call, check_verdict, run_compare
from tests.ports import Style
from tests.ports.gemma import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "GemmaForCausalLM"
# the reference module each bug is in (None: no bug)
ORIGINS = {
    Bug.NONE: None,
    Bug.ROPE_CONVENTION: "model.layers.0.self_attn",
    Bug.ROPE_SIGN: "model.layers.0.self_attn",
    Bug.SWAPPED_FUSED_HALVES: "model.layers.1.mlp.gate_proj",
    Bug.MISSING_ONE_PLUS_W: "model.layers.1.post_attention_layernorm",
    Bug.RESIDUAL_FROM_NORMED: "model.layers.1",
    Bug.MISSING_FEED_FORWARD_RESIDUAL: "model.layers.0",
    # outputs not recorded: what the next call receives is neither the last projection's output nor that
    # plus a residual, as it is in the reference
    Bug.ATTENTION_OUTPUT_HALVED: "model.layers.0.self_attn",
    Bug.MLP_OUTPUT_SCALED: "model.layers.0.mlp",
    Bug.FINAL_NORM_SKIPPED: "",  # the port has no call of its norm: the note names the reference's first
}
# the mask is made by the model's own code: the plain port has no model wrapper, the other has
MASK_ORIGINS = {Style.PLAIN: "", Style.KEYWORDS: "model"}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("gemma"))


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, style, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("gemma", style, bug), tmp_path / "result.json")
    origin = MASK_ORIGINS[style] if bug is Bug.MASK_OFF_BY_ONE else ORIGINS[bug]
    check_verdict(result, code, ROOT, origin, printed)
    if bug is Bug.MASK_OFF_BY_ONE:  # the input that differs is named
        assert "the inputs of GemmaForCausalLM.model.layers.0 differ: inputs.kwargs.attention_mask" in printed
    if bug is Bug.SWAPPED_FUSED_HALVES:
        assert "the parts are in another order" in " ".join(result["divergence_origin"]["details"])
    if bug is Bug.RESIDUAL_FROM_NORMED:
        assert f"before {ROOT}.model.layers.1.post_attention_layernorm" in result["origin_note"]
        assert result["origin_note"].endswith("in its own code")
    if bug is Bug.FINAL_NORM_SKIPPED:
        check_skipped_call(result, f"{ROOT}.model.norm", f"{ROOT}.lm_head")
    if bug in (Bug.ATTENTION_OUTPUT_HALVED, Bug.MLP_OUTPUT_SCALED):  # its end, after its last projection
        module, last, receiver = {
            Bug.ATTENTION_OUTPUT_HALVED: ("self_attn", "o_proj", "post_attention_layernorm"),
            Bug.MLP_OUTPUT_SCALED: ("mlp", "down_proj", "layers.1"),
        }[bug]
        layer = f"{ROOT}.model.layers.0"
        receiver = f"{ROOT}.model.{receiver}" if receiver.startswith("layers") else f"{layer}.{receiver}"
        assert result["origin_note"].startswith(
            f"the difference is made at the end of {layer}.{module}, after its last recorded call "
            f"{layer}.{module}.{last} (everything recorded in it agrees): {receiver} receives neither that "
            "call's output nor that plus a tensor recorded before it (a residual), as in the reference: in its own code"
        ), result["origin_note"]
    if bug is Bug.MISSING_FEED_FORWARD_RESIDUAL:  # what a block returns is not recorded: its end is named
        assert result["origin_note"].startswith(
            f"the difference is made at the end of {ROOT}.model.layers.0, after its last recorded call "
            f"{ROOT}.model.layers.0.mlp.down_proj (everything recorded in it agrees): in its own code"
        )


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize(
    "bug",
    [
        Bug.NONE,
        Bug.ATTENTION_OUTPUT_HALVED,
        Bug.MLP_OUTPUT_SCALED,
        Bug.RESIDUAL_FROM_NORMED,
        Bug.MISSING_FEED_FORWARD_RESIDUAL,
    ],
    ids=lambda bug: bug.name.lower(),
)
def test_summary_traces_tell_a_module_changed_at_its_end_from_its_parent(traces, style, bug, tmp_path):
    """A porter's first traces (``use_repr=True``) hold statistics and printed values, no tensors: the
    next call's input is the last projection's output plus the residual, element by element, in the
    reference, and not in the port, whose attention (MLP) scales after it; where the port's parent
    combines them otherwise, the parent stays the origin."""
    code, result, printed = run_compare(
        *traces.get("gemma", style, bug, summary=True), tmp_path / "result.json"
    )
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    if bug in (Bug.ATTENTION_OUTPUT_HALVED, Bug.MLP_OUTPUT_SCALED):
        assert (
            "as in the reference (told by the statistics and printed values of the summary traces)"
            in (result["origin_note"])
        )
    if bug is not Bug.NONE:  # printed values decide: no "summary traces cannot tell which"
        assert "use_repr=False would" not in result["origin_note"]


@pytest.mark.parametrize("style", list(Style), ids=str)
def test_with_gelu_recorded_the_activation_module_pairs_with_the_function(traces, style, tmp_path):
    reference, port = traces.get("gemma", style, Bug.NONE, functions=True)
    code, result, printed = run_compare(reference, port, tmp_path / "result.json")
    check_verdict(result, code, ROOT, None, printed)
    assert not any("act_fn" in call for call in result["unmatched_reference"])


def test_logic_moved_out_of_the_embedding_is_equivalent_at_block_boundaries(traces, tmp_path):
    reference, port = traces.get("gemma", Style.PLAIN, Bug.NONE, scale_in_forward=True)
    code, result, printed = run_compare(reference, port, tmp_path / "all.json")
    check_verdict(result, code, ROOT, "model.embed_tokens", printed)
    code, result, printed = run_compare(reference, port, tmp_path / "boundaries.json", "--boundaries")
    check_verdict(result, code, ROOT, None, printed)
    assert [module["module_path"] for module in result["modules"]] == [
        f"{ROOT}.model.layers.0", f"{ROOT}.model.layers.1", f"{ROOT}.model.norm", f"{ROOT}.lm_head"
    ]  # fmt: skip
    # a bug inside a block is still found, at the block it is in
    code, result, printed = run_compare(
        *traces.get("gemma", Style.PLAIN, Bug.MISSING_ONE_PLUS_W), tmp_path / "bug.json", "--boundaries"
    )
    check_verdict(result, code, ROOT, "model.layers.1", printed)


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize(
    "bug", [Bug.NONE, Bug.MASK_OFF_BY_ONE, Bug.ROPE_SIGN], ids=lambda bug: bug.name.lower()
)
def test_the_inferred_alignment_passed_back_as_rules_gives_the_same_verdict(traces, style, bug, tmp_path):
    check_rules_round_trip(*traces.get("gemma", style, bug), tmp_path)


@pytest.mark.parametrize(
    "bug", [Bug.NONE, Bug.ROPE_SIGN, Bug.MISSING_FEED_FORWARD_RESIDUAL], ids=lambda bug: bug.name.lower()
)
def test_a_block_that_projects_itself_pairs_its_fused_qkv_in_every_layer(traces, bug, tmp_path):
    """The flat port's blocks call ``wqkv`` themselves, where ``gate_proj`` of the same shapes is a
    sibling of q/k/v once the reference's attention and MLP are looked through: the values pair the
    first layer's, and after a bug (every attention's, every block's end) the next layer's pair as
    the first layer's did."""
    code, result, printed = run_compare(
        *traces.get("gemma", Style.PLAIN, bug, flat=True), tmp_path / "result.json"
    )
    check_verdict(result, code, ROOT, None if bug is Bug.NONE else "model.layers.0", printed)
    fused = {
        module["module_path"]: module["candidate_path"]
        for module in result["modules"]
        if module["alignment"] == "fused"
    }
    for layer in (0, 1):
        assert (
            fused[f"{ROOT}.model.layers.{layer}.self_attn.q_proj"] == f"PlainGemma.blocks.{layer}.attn.wqkv"
        )
    assert not [call for call in result["unmatched_reference"] if "_proj" in call]
    assert not result["unmatched_candidate"]
