"""compare on a ViT port that embeds in its own forward (tests/ports/vit_conv.py): the reference does
that work in ``vit.embeddings``, which the port has no module for, after a patch projection that
agrees. A bug there is made in the port's own forward, and the note names where the reference does
it: the end of ``vit.embeddings`` and of its ``patch_embeddings``, whose outputs are not recorded."""

import pytest

from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style
from tests.ports.traced import PortTraces
from tests.ports.vit_conv import Bug

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "ViTForImageClassification"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("vit_conv"))


def test_the_correct_port_is_equivalent(traces, tmp_path):
    code, result, printed = run_compare(*traces.get("vit_conv", Style.PLAIN, Bug.NONE), tmp_path / "r.json")
    check_verdict(result, code, ROOT, None, printed)


@pytest.mark.parametrize("bug", [Bug.PATCH_ORDER, Bug.POSITIONS_SHIFTED], ids=lambda bug: bug.name.lower())
def test_a_bug_in_the_ports_own_embedding_code_is_placed_at_the_end_of_the_embeddings(traces, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("vit_conv", Style.PLAIN, bug), tmp_path / "r.json")
    check_verdict(result, code, ROOT, "", printed)  # the port's own forward: its root
    assert result["first_input_divergence"]["module_path"] == f"{ROOT}.vit.layers.0"
    embeddings = f"{ROOT}.vit.embeddings"
    assert (
        f"after {embeddings}.patch_embeddings.projection (its outputs agree), at the end of "
        f"{embeddings}.patch_embeddings or of {embeddings} (no counterpart in the candidate; "
        f"outputs not recorded), or in the code of {ROOT}.vit (no counterpart"
    ) in result["origin_note"]
