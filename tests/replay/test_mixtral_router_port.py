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


def test_a_bug_at_the_end_of_the_last_layer_is_placed_there_not_in_the_models_own_code(session):
    # the experts of the last layer are wrong; what differs first is the final norm's input
    found = session.replay(Style.PLAIN, "SWAPPED_GATE_AND_UP", adapted=False, bisect=True)
    layer = full_path(found, "model.layers.1")
    assert found.smallest_wrong.reason.endswith(
        f"is in the inputs of {full_path(found, 'model.norm')}: likely in the outputs of {layer} (not recorded), "
        f"made at its end, in its last call {layer}.mlp (not recorded either) or after it"
    )
    assert "the bug is in its own code" not in found.smallest_wrong.reason
