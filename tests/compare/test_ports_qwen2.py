"""compare, with its defaults and no rename file, on a hand-written Qwen2 port (tests/ports/qwen2.py):
a sliding-window layer whose mask the port makes itself from its padding mask, and a fused qkv with
biases. The correct port is equivalent, with and without left padding, in both trace modes; each
planted bug is found where it is."""

import pytest
import torch

from model_debugging import debug_port
from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style, qwen2
from tests.ports.catalog import trace
from tests.ports.qwen2 import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "Qwen2ForCausalLM"
ORIGINS = {
    Bug.NONE: None,
    Bug.SCORES_OVER_HEAD_DIM: "model.layers.0.self_attn",
    Bug.TRANSPOSED_OUTPUT_PROJECTION: "model.layers.0.self_attn.o_proj",
    Bug.NO_QKV_BIAS: "model.layers.0.self_attn.q_proj",  # the fused qkv's first part
    Bug.NORM_EPS: "model.layers.0.input_layernorm",
    Bug.WINDOW_OFF_BY_ONE: "model.layers.1.self_attn",  # the first sliding-window layer
    Bug.KEY_POSITIONS_SHIFTED: "model.layers.0.self_attn",
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("qwen2"))


@pytest.fixture(scope="module")
def padded(tmp_path_factory):
    """(reference trace, {bug: port trace}) with the second sequence's first 3 tokens padded."""
    directory, reference = tmp_path_factory.mktemp("qwen2-padded"), qwen2.reference()
    given = qwen2.inputs(left_padding=3)
    ports = {
        bug: trace(qwen2.port(reference, bug=bug), directory / bug.name, given)
        for bug in (Bug.NONE, Bug.WINDOW_OFF_BY_ONE)
    }
    return trace(reference, directory / "reference", given), ports


@pytest.mark.parametrize("summary", [False, True], ids=["tensors", "summary"])
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, bug, summary, tmp_path):
    """The reference's sliding-window layer gets a 4-D mask (causal, the last 4 keys) where the
    port's block gets its padding mask: the same mask once the port's window is applied."""
    code, result, printed = run_compare(
        *traces.get("qwen2", Style.PLAIN, bug, summary=summary), tmp_path / "result.json"
    )
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)


@pytest.mark.parametrize("bug", [Bug.NONE, Bug.WINDOW_OFF_BY_ONE], ids=lambda bug: bug.name.lower())
def test_with_left_padding_a_fused_projection_differing_at_padded_tokens_only_is_a_note(
    padded, bug, tmp_path
):
    reference, ports = padded
    code, result, printed = run_compare(reference, ports[bug], tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    if bug is Bug.NONE:
        (fused,) = [
            module
            for module in result["modules"]
            if module["module_path"] == f"{ROOT}.model.layers.1.self_attn.q_proj"
        ]
        assert fused["alignment"] == "fused" and fused["status"] == "equal"
        assert (
            "outputs: differs only at tokens the model's attention_mask pads: not counted" in fused["notes"]
        )


@pytest.mark.parametrize("scale", [1.0, 1.05], ids=["correct", "keys_5_percent_off"])
def test_in_bfloat16_a_fused_qkv_is_judged_against_the_references_own_rounding(tmp_path, scale):
    """debug_port compares a bfloat16 port within the reference's own rounding (its float32 copy): the
    fused qkv too, whose key weights 5% off passed the looser tolerance derived from the dtype."""
    reference = qwen2.reference()
    port = qwen2.port(reference).to(torch.bfloat16)
    with torch.no_grad():
        port.blocks[0].attn.qkv.weight[32:48] *= scale
    result = debug_port(
        reference.to(torch.bfloat16), port, qwen2.inputs(), output_dir=tmp_path, verbose=False
    )
    assert result.equivalent is (scale == 1.0)
    origin = result.comparison.divergence_origin
    assert (origin and origin.module_path) == (None if scale == 1.0 else f"{ROOT}.{ORIGINS[Bug.NO_QKV_BIAS]}")
