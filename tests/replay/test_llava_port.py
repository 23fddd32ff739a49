"""Replay's bisection on a hand-written LLaVA port (tests/ports/llava.py): a vision tower returning
every layer's hidden states, the feature layer, the CLS drop and the merge of the image features in
the port's own forward, decoder blocks taking ``(x, cos, sin, mask)``. Each bug is named at the
smallest module that is wrong on the reference's recorded inputs; a correct port is correct with left
padding too (the port counts positions from each sequence's first real token, so its blocks cannot
be given the reference's rotary tables then: see docs/replay.md, "the port computes an input
another way")."""

import pytest

from model_debugging import compare_traces, replay_trace
from tests.ports import llava
from tests.ports.catalog import trace
from tests.ports.llava import Bug

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "LlavaForConditionalGeneration"


@pytest.fixture(scope="module")
def reference():
    return llava.reference()


@pytest.mark.parametrize(
    ("bug", "left_padding", "origin", "where"),
    [
        (Bug.NONE, 3, None, None),
        (
            Bug.PIXELS_BGR,
            0,
            f"{ROOT}.model.vision_tower",
            "before model.vision_tower.embeddings.patch_embedding",
        ),
        (Bug.MERGE_SHIFTED, 0, ROOT, "before model.language_model.layers.0"),
        (Bug.ROPE_SIGN, 0, f"{ROOT}.model.language_model.layers.0.self_attn", None),
    ],
    ids=lambda value: getattr(value, "name", str(value)).lower(),
)
def test_bisection_names_the_module_a_bug_is_in(reference, tmp_path, bug, left_padding, origin, where):
    port, given = llava.port(reference, bug=bug), llava.inputs(left_padding)
    reference_trace = trace(reference, tmp_path / "reference", given)
    comparison = compare_traces(reference_trace, trace(port, tmp_path / "port", given))
    found = replay_trace(reference_trace, port, bisect=True, comparison=comparison)
    assert (found.smallest_wrong and found.smallest_wrong.module_path) == origin
    if where is not None:
        assert where in "\n".join(found.summary_lines())
