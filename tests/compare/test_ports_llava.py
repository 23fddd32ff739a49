"""compare, with its defaults and no rename file, on a hand-written LLaVA port (tests/ports/llava.py):
a vision tower, a projector and a Llama decoder, the feature layer chosen and the image features
merged in the port's own forward (the reference does both in its ``model``, which the port does not
have). The correct port is equivalent, with left padding and with two images per sequence too, in
both trace modes; each planted bug is found where it is."""

import pytest

from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style, llava
from tests.ports.catalog import trace
from tests.ports.llava import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "LlavaForConditionalGeneration"
TOWER = "model.vision_tower"
ORIGINS = {
    Bug.NONE: None,
    Bug.LAST_FEATURE_LAYER: "",  # the port's own forward selects the features: its root
    Bug.CLS_KEPT: "",
    Bug.PROJECTOR_SILU: "model.multi_modal_projector",
    Bug.MERGE_SHIFTED: "",
    Bug.PATCHES_TRANSPOSED: TOWER,  # the port flattens the patches in its tower's forward
    Bug.PIXELS_BGR: TOWER,
    Bug.ROPE_SIGN: "model.language_model.layers.0.self_attn",
    Bug.NORM_EPS: "model.language_model.layers.0.input_layernorm",
}
# summary statistics do not see the flipped channels: the patch embedding is the first call that differs
SUMMARY_ORIGINS = ORIGINS | {Bug.PIXELS_BGR: f"{TOWER}.embeddings.patch_embedding"}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("llava"))


@pytest.mark.parametrize("summary", [False, True], ids=["tensors", "summary"])
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, bug, summary, tmp_path):
    code, result, printed = run_compare(
        *traces.get("llava", Style.PLAIN, bug, summary=summary), tmp_path / "result.json"
    )
    check_verdict(result, code, ROOT, (SUMMARY_ORIGINS if summary else ORIGINS)[bug], printed)


def test_features_merged_at_the_wrong_tokens_point_at_the_code_of_the_references_model(traces, tmp_path):
    """The reference merges in its ``model``'s code, between its projector and its ``language_model``:
    the note named only the language model's code, the innermost caller of the first layer."""
    _, result, _ = run_compare(*traces.get("llava", Style.PLAIN, Bug.MERGE_SHIFTED), tmp_path / "result.json")
    assert (
        f"in the code of {ROOT}.model or of {ROOT}.model.language_model (no counterpart in the candidate)"
        in result["origin_note"]
    ), result["origin_note"]


def test_with_summary_statistics_flipped_channels_are_said_to_be_possible(traces, tmp_path):
    """The patch embedding's inputs agree in mean/std/min/max, as flipped channels do: the note says
    so, where the origin alone sent the porter to a correct Conv2d."""
    _, result, printed = run_compare(
        *traces.get("llava", Style.PLAIN, Bug.PIXELS_BGR, summary=True), tmp_path / "result.json"
    )
    assert result["origin_note"].startswith("its inputs agree in summary statistics, which the same values")
    assert "check the order of\n    what it receives" in printed or "check the order of what" in printed


@pytest.mark.parametrize(
    ("given", "bug"),
    [
        ({"left_padding": 3}, Bug.NONE),
        ({"left_padding": 3}, Bug.MERGE_SHIFTED),
        ({"images": 2}, Bug.NONE),
        ({"images": 2}, Bug.PROJECTOR_SILU),
    ],
    ids=["padded", "padded-merge_shifted", "two_images", "two_images-projector_silu"],
)
def test_left_padding_and_two_images(tmp_path, given, bug):
    reference, inputs = llava.reference(), llava.inputs(**given)
    reference_trace = trace(reference, tmp_path / "reference", inputs)
    port_trace = trace(llava.port(reference, bug=bug), tmp_path / "port", inputs)
    code, result, printed = run_compare(reference_trace, port_trace, tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
