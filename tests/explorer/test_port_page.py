"""The page of a hand-written ViT port compared with its reference (tests/ports/vit_conv.py), as a
porter opens it: the port adds the CLS token and positions in its own forward, where the reference
has ``vit.embeddings``, which compare looks through; the page must not call that module accounted."""

import pytest

from model_debugging import write_view
from tests.ports import Style
from tests.ports.traced import PortTraces
from tests.ports.vit_conv import Bug

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "ViTForImageClassification"


def test_a_module_compare_looks_through_is_shown_as_such(tmp_path, open_page):
    reference, port = PortTraces(tmp_path).get("vit_conv", Style.PLAIN, Bug.POSITIONS_SHIFTED)
    page = write_view(reference, tmp_path / "page.html", compare=port)
    opened = open_page(page)
    assert opened.page.locator("[data-origin]").get_attribute("data-module") == ROOT
    for wrapper in ("vit", "vit.embeddings", "vit.embeddings.patch_embeddings"):
        row = opened.row(f"{ROOT}.{wrapper}")
        assert row.get_attribute("data-status") == "looked-through", wrapper
        assert row.locator(".badge").first.text_content() == "looked through"
    assert opened.row(f"{ROOT}.vit.embeddings.dropout").get_attribute("data-status") == "accounted"
    assert (
        opened.row(f"{ROOT}.vit.embeddings.patch_embeddings.projection").get_attribute("data-status")
        == "equal"
    )
    opened.row(f"{ROOT}.vit.embeddings").click()
    assert "compare looked through it" in opened.page.text_content("#detail")
    assert opened.problems == []
