"""compare, with its defaults and no rename file, on a hand-written Mixtral port (tests/ports/mixtral.py):
the router and the experts are written so differently that none of their calls pairs with the
reference's, and a bug there is placed at the end of the layer, in its mixture-of-experts call."""

import pytest

from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style
from tests.ports.mixtral import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "MixtralForCausalLM"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("mixtral"))


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_a_bug_in_the_experts_is_placed_in_the_layers_expert_call(traces, style, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("mixtral", style, bug), tmp_path / "result.json")
    check_verdict(result, code, ROOT, None if bug is Bug.NONE else "model.layers.0", printed)
    if (
        bug is not Bug.NONE
    ):  # not "everything recorded in it agrees": its expert call's outputs are not recorded
        assert result["origin_note"].startswith(
            f"the difference is made at the end of {ROOT}.model.layers.0: in its last recorded call "
            f"{ROOT}.model.layers.0.mlp, whose outputs are not recorded (its inputs agree): among its calls "
            f"left unaligned ({ROOT}.model.layers.0.mlp.gate, {ROOT}.model.layers.0.mlp.experts, "
        ), result["origin_note"]
