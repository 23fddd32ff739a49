"""compare, with its defaults and no rename file, on hand-written ViT ports (tests/ports/vit.py):
each correct port is equivalent and each planted bug is found where it is."""

import pytest

from tests.compare.port_checks import check_rules_round_trip, check_skipped_call, check_verdict, run_compare
from tests.ports import Style
from tests.ports.traced import PortTraces
from tests.ports.vit import Bug

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "ViTForImageClassification"
ORIGINS = {
    Bug.NONE: None,
    Bug.SWAPPED_FUSED_HALVES: "vit.layers.1.attention.q_proj",
    Bug.PATCH_ORDER: "vit.embeddings.patch_embeddings.projection",  # the Conv2d, against unfold + Linear
    Bug.NORM_WITHOUT_BIAS: "vit.layers.1.layernorm_after",
    Bug.RESIDUAL_FROM_NORMED: "vit.layers.1",
    Bug.FINAL_NORM_SKIPPED: "",  # the port has no call of its norm: the note names the reference's first
}
# a bug in the attention or MLP code: the plain port's blocks are flat (no attention or MLP module)
INSIDE = {
    Bug.ATTENTION_SCALE: ("vit.layers.0", "vit.layers.0.attention"),
    Bug.GELU_TANH: ("vit.layers.0", "vit.layers.0.mlp"),
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("vit"))


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, style, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("vit", style, bug), tmp_path / "result.json")
    origin = INSIDE[bug][style is Style.KEYWORDS] if bug in INSIDE else ORIGINS[bug]
    check_verdict(result, code, ROOT, origin, printed)
    if bug is Bug.GELU_TANH:  # the reference's activation module has no counterpart: the note names it first
        assert result["origin_note"].startswith(f"{ROOT}.vit.layers.0.mlp.activation_fn (no counterpart")
    if bug is Bug.FINAL_NORM_SKIPPED:  # the classifier gets the first token of the norm's output
        check_skipped_call(result, f"{ROOT}.vit.layernorm", f"{ROOT}.classifier")
        assert "receives as inputs.args.0 (its output[:, 0])" in result["origin_note"]
    if bug is Bug.ATTENTION_SCALE and style is Style.PLAIN:
        assert f"in the code of {ROOT}.vit.layers.0.attention (no counterpart" in result["origin_note"]


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", [Bug.NONE, Bug.GELU_TANH], ids=lambda bug: bug.name.lower())
def test_with_gelu_recorded_the_function_is_named(traces, style, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("vit", style, bug, functions=True), tmp_path / "r.json")
    check_verdict(
        result, code, ROOT, None if bug is Bug.NONE else "vit.layers.0.mlp.activation_fn.gelu", printed
    )
    assert not result["unmatched_reference"] and not result["unmatched_candidate"]


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", [Bug.NONE, Bug.PATCH_ORDER], ids=lambda bug: bug.name.lower())
def test_the_inferred_alignment_passed_back_as_rules_gives_the_same_verdict(traces, style, bug, tmp_path):
    check_rules_round_trip(*traces.get("vit", style, bug), tmp_path)
