"""compare on a Mixtral port whose router returns ``(weights, indices)`` where the reference's gate
returns ``(logits, weights, indices)`` (tests/ports/mixtral_router.py): the two are paired on the
tensors both return, so a router bug is named at the router, and a bug in the experts (whose calls
pair with none of the reference's) at the end of the layer, among the calls after the router."""

import pytest

from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style
from tests.ports.mixtral_router import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "MixtralForCausalLM"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("mixtral_router"))


def test_the_correct_port_is_equivalent_with_its_router_paired(traces, tmp_path):
    code, result, printed = run_compare(
        *traces.get("mixtral_router", Style.PLAIN, Bug.NONE), tmp_path / "r.json"
    )
    check_verdict(result, code, ROOT, None, printed)
    gate = next(row for row in result["modules"] if row["module_path"] == f"{ROOT}.model.layers.0.mlp.gate")
    assert gate["candidate_path"] == "Mixtral.layers.0.moe.router" and gate["status"] == "equal"
    assert "outputs.0 returned by the reference only" in " ".join(gate["notes"])


def test_a_router_bug_is_named_at_the_router(traces, tmp_path):
    code, result, printed = run_compare(
        *traces.get("mixtral_router", Style.PLAIN, Bug.SOFTMAX_BEFORE_TOP_K), tmp_path / "r.json"
    )
    check_verdict(result, code, ROOT, "model.layers.0.mlp.gate", printed)
    assert "divergence origin: MixtralForCausalLM.model.layers.0.mlp.gate (outputs.1 / 0 differs" in printed


def test_an_expert_bug_is_placed_among_the_calls_after_the_router(traces, tmp_path):
    code, result, printed = run_compare(
        *traces.get("mixtral_router", Style.PLAIN, Bug.SWAPPED_GATE_AND_UP), tmp_path / "r.json"
    )
    check_verdict(result, code, ROOT, "model.layers.1", printed)
    assert result["origin_note"].startswith(
        f"the difference is made at the end of {ROOT}.model.layers.1, after its last recorded call "
        f"{ROOT}.model.layers.1.mlp.gate (everything recorded in it agrees): among its calls left unaligned "
        f"after it ({ROOT}.model.layers.1.mlp.experts, Mixtral.layers.1.moe.experts.0,"
    )
