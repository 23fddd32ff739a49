"""compare, with its defaults and no rename file, on a BERT port in plain PyTorch (tests/ports/bert.py):
its blocks sit directly in its transformer (no encoder module), its position ids are expanded to the
batch, its norms are TF-style modules with ``gamma``/``beta``, its mask is made in each attention."""

import pytest

from tests.compare.port_checks import check_rules_round_trip, check_verdict, run_compare
from tests.ports import Style
from tests.ports.bert import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "BertForSequenceClassification"
ORIGINS = {
    Bug.NONE: None,
    Bug.LAYER_NORM_EPS: "bert.embeddings.LayerNorm",
    Bug.NO_TOKEN_TYPES: "bert.embeddings",
    Bug.MASK_ON_QUERIES: "bert.encoder.layer.0",
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("bert"))


@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_default_compare_finds_each_bug_where_it_is(traces, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("bert", Style.PLAIN, bug), tmp_path / "result.json")
    check_verdict(result, code, ROOT, ORIGINS[bug], printed)
    # the encoder is looked through (the port's blocks are its layers), and the position embeddings
    # ([1, 8] ids against the port's [2, 8]) pair
    paired = {row["module_path"]: row["candidate_path"] for row in result["modules"]}
    assert paired[f"{ROOT}.bert.encoder.layer.0"] == "Classifier.transformer.blocks.0"
    assert paired[f"{ROOT}.bert.encoder.layer.1"] == "Classifier.transformer.blocks.1"
    assert f"{ROOT}.bert.encoder" not in paired
    if bug is not Bug.NO_TOKEN_TYPES:
        assert (
            paired[f"{ROOT}.bert.embeddings.position_embeddings"] == "Classifier.transformer.embed.pos_embed"
        )
    else:  # the embedding the port never calls is named, not paired with its position embedding
        assert (
            f"among its calls left unaligned ({ROOT}.bert.embeddings.token_type_embeddings)"
            in (result["origin_note"])
        )


def test_the_inferred_alignment_passed_back_as_rules_gives_the_same_verdict(traces, tmp_path):
    check_rules_round_trip(*traces.get("bert", Style.PLAIN, Bug.NONE), tmp_path)
