"""Replay's bisection on a hand-written Qwen2 port (tests/ports/qwen2.py) whose blocks take
``(x, cos, sin, mask)``: rotary tables made for one position more than the sequence (the attention
slices them), and the padding mask where the reference's sliding-window layer gets a 4-D mask. The
derived adapter gives the port's blocks the reference's values in its own form, so a bug inside an
attention is named at that attention."""

import pytest

from model_debugging import compare_traces, replay_trace
from tests.ports import qwen2
from tests.ports.catalog import trace
from tests.ports.qwen2 import Bug

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

LAYERS = "Qwen2ForCausalLM.model.layers"


@pytest.fixture(scope="module")
def reference():
    return qwen2.reference()


@pytest.mark.parametrize(
    ("bug", "left_padding", "origin"),
    [
        (Bug.NONE, 3, None),
        (Bug.KEY_POSITIONS_SHIFTED, 0, f"{LAYERS}.0.self_attn"),
        (Bug.WINDOW_OFF_BY_ONE, 3, f"{LAYERS}.1.self_attn"),
    ],
    ids=lambda value: getattr(value, "name", str(value)).lower(),
)
def test_bisection_names_the_attention_a_bug_is_in(reference, tmp_path, bug, left_padding, origin):
    port, given = qwen2.port(reference, bug=bug), qwen2.inputs(left_padding)
    reference_trace = trace(reference, tmp_path / "reference", given)
    comparison = compare_traces(reference_trace, trace(port, tmp_path / "port", given))
    found = replay_trace(reference_trace, port, bisect=True, comparison=comparison)
    assert (found.smallest_wrong and found.smallest_wrong.module_path) == origin
    if origin is not None:
        (attention,) = [module for module in found.modules if module.module_path == origin]
        assert "then its own positions beyond it as [11, 8] torch.float32" in attention.called_as
