"""compare, with its defaults and no rename file, on a hand-written DeepSeek-V3 port
(tests/ports/deepseek_v3.py): multi-head latent attention with complex rope, a router given the
tokens as ``[batch * tokens, width]`` where the reference's gets ``[batch, tokens, width]``, one
module per routed expert (called on its tokens only) where the reference has one ``experts``
module. The correct port is equivalent in both trace modes; each planted bug is found where it is."""

import pytest

from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style, deepseek_v3
from tests.ports.catalog import trace
from tests.ports.deepseek_v3 import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "DeepseekV3ForCausalLM"
GATE = "model.layers.1.mlp.gate"  # the first MoE layer's router
ORIGINS = {
    Bug.NONE: None,
    Bug.SOFTMAX_SCORES: GATE,
    Bug.BIAS_IN_WEIGHTS: GATE,
    Bug.NO_ROUTED_SCALING: GATE,
    Bug.NOT_RENORMALIZED: GATE,
    Bug.NO_GROUP_LIMIT: GATE,
    # the MoE's outputs are not recorded (it has children): seen at the end of its layer
    Bug.NO_SHARED_EXPERT: "model.layers.1",
    Bug.ROPE_ON_NOPE: "model.layers.0.self_attn",
    Bug.NO_KV_NORM: "model.layers.0.self_attn",
    Bug.SCALE_HEAD_DIM: "model.layers.0.self_attn",
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("deepseek_v3"))


@pytest.mark.parametrize("summary", [False, True], ids=["tensors", "summary"])
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, bug, summary, tmp_path):
    code, result, printed = run_compare(
        *traces.get("deepseek_v3", Style.PLAIN, bug, summary=summary), tmp_path / "result.json"
    )
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    # experts no token was routed to are not called: no layer was pruned
    assert not [warning for warning in result["warnings"] if "pruned" in warning], result["warnings"]
    if bug is Bug.NO_SHARED_EXPERT:
        assert f"{ROOT}.model.layers.1.mlp.shared_experts" in result["origin_note"]
    if bug is Bug.NO_KV_NORM:
        assert f"{ROOT}.model.layers.0.self_attn.kv_a_layernorm" in result["origin_note"]


def test_the_router_and_the_shared_expert_pair_whatever_the_tokens_shape_and_no_expert_with_all(
    traces, tmp_path
):
    """The port's ``gate`` and ``shared`` get ``[20, 32]`` where the reference's get ``[2, 10, 32]``;
    an expert of the port's list (one that got a single token, ``[1, 32]``) is not the reference's
    ``experts`` module, which runs them all."""
    _, result, _ = run_compare(*traces.get("deepseek_v3", Style.PLAIN, Bug.NONE), tmp_path / "result.json")
    paired = {
        module["module_path"].removeprefix(f"{ROOT}."): module["candidate_path"]
        for module in result["modules"]
    }
    for layer in (1, 2):
        assert paired[f"model.layers.{layer}.mlp.gate"] == f"DeepSeekLM.blocks.{layer}.ffn.gate"
        assert paired[f"model.layers.{layer}.mlp.shared_experts"] == f"DeepSeekLM.blocks.{layer}.ffn.shared"
        assert f"{ROOT}.model.layers.{layer}.mlp.experts" in result["unmatched_reference"]


@pytest.fixture(scope="module")
def padded(tmp_path_factory):
    """(reference trace, {bug: port trace}) with the second sequence's first 3 tokens padded."""
    directory, reference = tmp_path_factory.mktemp("deepseek_v3-padded"), deepseek_v3.reference()
    given = deepseek_v3.inputs(left_padding=3)
    ports = {
        bug: trace(deepseek_v3.port(reference, bug=bug), directory / bug.name, given)
        for bug in (Bug.NONE, Bug.NO_ROUTED_SCALING)
    }
    return trace(reference, directory / "reference", given), ports


@pytest.mark.parametrize("bug", [Bug.NONE, Bug.NO_ROUTED_SCALING], ids=lambda bug: bug.name.lower())
def test_with_left_padding_the_routers_choices_at_padded_tokens_are_a_note(padded, bug, tmp_path):
    """The router's weights and indices are ``[batch * tokens, k]``: those of padded tokens, which
    the two models fill in differently, do not count."""
    reference, ports = padded
    code, result, printed = run_compare(reference, ports[bug], tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    if bug is Bug.NONE:
        (gate,) = [module for module in result["modules"] if module["module_path"] == f"{ROOT}.{GATE}"]
        assert "differs only at tokens the model's attention_mask pads" in " ".join(gate["notes"]), gate
