"""Replay on the hand-written ports of T5 (an encoder-decoder): correct when correct (also in bfloat16),
and each planted bug placed where it is (see ``port_proof``)."""

import pytest
import torch

from model_debugging import ReplayVerdict
from tests.ports import Style, t5
from tests.replay.port_proof import PortSession, bug_cases, bug_place, full_path, verdict_counts

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    return PortSession(t5, tmp_path_factory.mktemp("t5"))


@pytest.mark.parametrize("style", Style)
def test_a_correct_port_replays_correct_in_float32_and_in_bfloat16(session, style):
    for dtype in (None, torch.bfloat16):
        counts = verdict_counts(session.replay(style, dtype=dtype))
        assert counts[ReplayVerdict.WRONG] == 0, dtype
        assert counts[ReplayVerdict.CORRECT] > counts[ReplayVerdict.NOT_REPLAYED], dtype


@pytest.mark.parametrize(("style", "bug"), bug_cases("t5"))
def test_bisection_places_each_planted_bug_where_it_is(session, style, bug):
    found = session.replay(style, bug, bisect=True)
    assert found.bug_in == full_path(found, bug_place("t5", style, bug))


# Without adapters, compare paired a reference wrapper (T5LayerSelfAttention, T5LayerFF: norm,
# sublayer and residual) with the port's bare sublayer after the bug, and bisection named that
# innocent wrapper in these cells. Every attention of the port needs an adapter, so bisection can
# only say which call the difference lies in.
@pytest.mark.parametrize(
    ("style", "bug", "holder"),
    [
        (Style.PLAIN, "ATTENTION_SCALE", "encoder.block.0.layer.0.SelfAttention"),
        (Style.KEYWORDS, "ATTENTION_SCALE", "encoder.block.0.layer.0.SelfAttention"),
        (Style.PLAIN, "MASK_OFF_BY_ONE", "decoder.block.0.layer.0.SelfAttention"),
        (Style.KEYWORDS, "MASK_OFF_BY_ONE", "decoder.block.0.layer.0.SelfAttention"),
    ],
)
def test_without_argument_adapters_bisection_names_no_innocent_module(session, style, bug, holder):
    found = session.replay(style, bug, bisect=True, adapted=False)
    place = full_path(found, bug_place("t5", style, bug))
    assert place == found.bug_in or place.startswith(found.bug_in + "."), found.bug_in
    assert (
        f"lies in {full_path(found, holder)}, which could not be replayed alone"
        in found.smallest_wrong.reason
    )
