"""Replay on a hand-written DeepSeek-V3 port (tests/ports/deepseek_v3.py): its MoE's router and
shared expert take the tokens flattened (``[20, 32]`` against the reference's ``[2, 10, 32]``), its
experts are one module each, and a MoE's outputs are not recorded (it has children)."""

import pytest

from model_debugging import ReplayVerdict, compare_traces, replay_trace
from tests.ports import deepseek_v3
from tests.ports.catalog import trace
from tests.ports.deepseek_v3 import Bug

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")


def test_a_moe_whose_recorded_calls_all_take_another_form_is_not_said_correct(tmp_path):
    """Nothing of the port's MoE could be compared with a recorded value: replay said 'correct on
    identical inputs' for a router that scores with a softmax."""
    reference = deepseek_v3.reference()
    port, given = deepseek_v3.port(reference, bug=Bug.SOFTMAX_SCORES), deepseek_v3.inputs()
    reference_trace = trace(reference, tmp_path / "reference", given)
    comparison = compare_traces(reference_trace, trace(port, tmp_path / "port", given))
    (found,) = replay_trace(
        reference_trace, port, modules=["model.layers.1.mlp"], comparison=comparison
    ).modules
    assert found.verdict is ReplayVerdict.NOT_REPLAYED, found
    assert found.reason.startswith(
        "nothing compared: model.layers.1.mlp.gate: takes and returns another form"
    )
