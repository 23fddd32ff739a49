"""Replay on the hand-written ports of Gemma (a decoder): correct when correct (also in bfloat16),
and each planted bug placed where it is (see ``port_proof``)."""

import pytest
import torch

from model_debugging import ReplayVerdict
from tests.ports import Style, gemma
from tests.replay.port_proof import (
    PortSession,
    bug_cases,
    bug_place,
    check_forgotten_call,
    full_path,
    verdict_counts,
)

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    return PortSession(gemma, tmp_path_factory.mktemp("gemma"))


@pytest.mark.parametrize("style", Style)
def test_a_correct_port_replays_correct_in_float32_and_in_bfloat16(session, style):
    for dtype in (None, torch.bfloat16):
        counts = verdict_counts(session.replay(style, dtype=dtype))
        assert counts[ReplayVerdict.WRONG] == 0, dtype
        assert counts[ReplayVerdict.CORRECT] > counts[ReplayVerdict.NOT_REPLAYED], dtype


@pytest.mark.parametrize(("style", "bug"), bug_cases("gemma"))
def test_bisection_places_each_planted_bug_where_it_is(session, style, bug):
    found = session.replay(style, bug, bisect=True)
    assert found.bug_in == full_path(found, bug_place("gemma", style, bug))


@pytest.mark.parametrize("style", Style)
def test_bisection_names_the_final_norm_the_port_forgets(session, style):
    found = session.replay(style, "FINAL_NORM_SKIPPED", bisect=True)
    check_forgotten_call(found, "GemmaForCausalLM", "model.norm", "lm_head")
