"""Replay on a BERT port in plain PyTorch (tests/ports/bert.py), with no argument adapter: the port's
``forward(input_ids, segment_ids, input_mask)`` is called as its own trace recorded it, on the
reference's ``input_ids``, ``token_type_ids`` and ``attention_mask`` (paired by value); a block
whose mask takes another form than the reference's gets the reference's mask converted to its own
form (checked against the port's own), and a bug in its attention is found there."""

import pytest

from model_debugging import ReplayVerdict, compare_traces, replay_trace
from tests.ports import bert
from tests.ports.catalog import trace

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "BertForSequenceClassification"


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bert")
    reference = bert.reference()
    return reference, trace(reference, directory / "reference", bert.inputs()), directory


def replayed(session, bug):
    reference, reference_trace, directory = session
    port = bert.port(reference, bug=bug)
    port_trace = trace(port, directory / bug.name, bert.port_inputs())
    comparison = compare_traces(reference_trace, port_trace)
    return replay_trace(reference_trace, port, bisect=True, comparison=comparison)


@pytest.mark.parametrize(
    ("bug", "place"),
    [
        (bert.Bug.NONE, None),
        (bert.Bug.NO_TOKEN_TYPES, "bert.embeddings"),
        (bert.Bug.LAYER_NORM_EPS, "bert.embeddings.LayerNorm"),
    ],
    ids=lambda value: getattr(value, "name", value),
)
def test_the_port_is_replayed_from_its_own_call_and_each_bug_placed(session, bug, place):
    found = replayed(session, bug)
    root = next(call for call in found.modules if call.module_path == ROOT)
    assert root.verdict is (ReplayVerdict.CORRECT if place is None else ReplayVerdict.WRONG), root
    assert found.bug_in == (None if place is None else f"{ROOT}.{place}")


def test_a_block_given_its_mask_in_another_form_is_called_with_the_reference_mask_in_its_form(session):
    found = replayed(session, bert.Bug.MASK_ON_QUERIES)
    block = next(call for call in found.modules if call.module_path == f"{ROOT}.bert.encoder.layer.0")
    assert block.verdict is ReplayVerdict.WRONG
    assert block.called_as.endswith(
        "mask = the reference's args.1 [2, 1, 8, 8] torch.float32 as [2, 8] torch.int64"
    ), block.called_as
    assert found.bug_in == f"{ROOT}.bert.encoder.layer.0"
    assert (
        f"so likely in the outputs of {ROOT}.bert.encoder.layer.0.attention.self (not recorded), made at its end"
        in found.smallest_wrong.reason
    )
