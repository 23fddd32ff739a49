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
# innocent wrapper in these cells. The decoder's self-attentions cannot be called without an adapter
# (the port's causal mask is no conversion of the reference's), so bisection can only say which call
# the difference lies in.
@pytest.mark.parametrize("style", Style)
def test_without_argument_adapters_bisection_names_no_innocent_module(session, style):
    found = session.replay(style, "MASK_OFF_BY_ONE", bisect=True, adapted=False)
    place = full_path(found, bug_place("t5", style, "MASK_OFF_BY_ONE"))
    assert place == found.bug_in or place.startswith(found.bug_in + "."), found.bug_in
    holder = full_path(found, "decoder.block.0.layer.0.SelfAttention")
    assert f"lies in {holder}, which could not be replayed alone" in found.smallest_wrong.reason
    if style is Style.PLAIN:
        assert "mask (args.2 [6, 6] torch.bool) has no derivable value" in found.smallest_wrong.reason


@pytest.mark.parametrize("style", Style)
def test_without_argument_adapters_a_later_attention_is_called_as_the_port_calls_it(session, style):
    """Every attention of the port scales its scores. The first one cannot be called (the reference
    computes the position bias inside it, the port before it); the second is called as the port's own
    model called it, its mask converted to the port's ``[2, 1, 1, 8]`` one: wrong there."""
    found = session.replay(style, "ATTENTION_SCALE", bisect=True, adapted=False)
    assert found.bug_in == full_path(found, "encoder.block.1.layer.0.SelfAttention")
    name, dtype = ("mask", "bool") if style is Style.PLAIN else ("attention_mask", "float32")
    assert found.smallest_wrong.called_as.endswith(
        f"{name} = the reference's mask [2, 1, 8, 8] torch.float32 as [2, 1, 1, 8] torch.{dtype}"
    ), found.smallest_wrong.called_as
