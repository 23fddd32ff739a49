"""Replay on a Mixtral port whose router returns ``(weights, indices)`` where the reference's gate
returns ``(logits, weights, indices)`` (tests/ports/mixtral_router.py), with compare's alignment: the
router is judged on the tensors both return, inside its layer too (the port unpacks two values),
and a router bug is placed at the router."""

import pytest

from model_debugging import ReplayVerdict
from tests.ports import Style, mixtral_router
from tests.replay.port_proof import PortSession, full_path, verdict_counts

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    return PortSession(mixtral_router, tmp_path_factory.mktemp("mixtral_router"))


def test_a_correct_port_replays_correct_router_and_layers(session):
    result = session.replay(Style.PLAIN, adapted=False)
    counts = verdict_counts(result)
    assert counts[ReplayVerdict.WRONG] == 0
    verdicts = {call.module_path: call.verdict for call in result.modules}
    for path in ("model.layers.0.mlp.gate", "model.layers.0.mlp", "model.layers.1"):
        assert verdicts[full_path(result, path)] is ReplayVerdict.CORRECT, path


def test_bisection_places_a_router_bug_at_the_router(session):
    found = session.replay(Style.PLAIN, "SOFTMAX_BEFORE_TOP_K", adapted=False, bisect=True)
    assert found.bug_in == full_path(found, "model.layers.0.mlp.gate")


def test_a_bug_in_the_experts_of_the_last_layer_is_placed_at_its_end_and_says_why_not_further(session):
    # the experts of the last layer are wrong; the layer's outputs are what the final norm received
    found = session.replay(Style.PLAIN, "SWAPPED_GATE_AND_UP", adapted=False, bisect=True)
    layer = full_path(found, "model.layers.1")
    assert found.bug_in == layer
    # the reference runs every expert in one call (3D weights): the port's experts have no counterpart
    assert found.smallest_wrong.reason == (
        "its recorded submodules and functions are correct on identical inputs, but not its outputs (given to "
        f"model.norm as args.0): the bug is at its end, in its last call {layer}.mlp (not recorded either), "
        f"whose own last call {layer}.mlp.experts has no counterpart in the candidate and records no outputs, "
        "so replay cannot check it alone, or after it"
    )
