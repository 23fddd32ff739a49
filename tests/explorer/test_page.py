"""The explorer page in headless Chromium: loading, search, folding, keys, badges and comparisons."""

from __future__ import annotations

import math

import pytest

from model_debugging import write_view
from tests.explorer.traces import ToySpec, write_llama_trace, write_toy_trace, write_upstream_llama_trace


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Pages for a plain trace, a tensor-file trace, a trace with NaN, and a 40-layer comparison."""
    root = tmp_path_factory.mktemp("pages")
    built = {
        "plain": write_view(write_toy_trace(root / "plain")),
        "tensors": write_view(write_toy_trace(root / "tensors", ToySpec(use_repr=False))),
        "nan": write_view(write_toy_trace(root / "nan", ToySpec(factors=[1.0, math.nan, 1.0]))),
        "raised": write_view(write_toy_trace(root / "raised", ToySpec(fail=True))),
    }
    factors = [1.0] * 40
    reference = write_toy_trace(root / "reference", ToySpec(factors=factors, extra={"dropout": 1.0}))
    broken = factors[:33] + [1.5] + factors[34:]
    candidate = write_toy_trace(root / "candidate", ToySpec(factors=broken, extra={"norm": 1.0}))
    built["compare"] = write_view(reference, root / "compare.html", compare=candidate, align=False)
    return built


def _rendered(opened) -> list[str]:
    return opened.page.eval_on_selector_all("#tree .row", "rows => rows.map(row => row.dataset.module)")


@pytest.mark.parametrize("kind", ["plain", "tensors", "raised", "compare"])
def test_page_loads_without_console_messages_or_network_requests(pages, open_page, kind):
    opened = open_page(pages[kind])
    assert opened.problems == []
    assert opened.requests == [pages[kind].resolve().as_uri()]  # the file itself, nothing else
    assert opened.row("ToyModel").count() == 1


def test_two_levels_are_open_at_first(pages, open_page):
    opened = open_page(pages["plain"])
    assert _rendered(opened)[:4] == [
        "ToyModel",
        "ToyModel.layers.0",
        "ToyModel.layers.0.proj",
        "ToyModel.layers.0.scale",
    ]
    assert len(_rendered(opened)) == 11


def test_search_filters_as_you_type_and_escape_restores_the_tree(pages, open_page):
    opened = open_page(pages["plain"])
    opened.page.fill("input[type=search]", "scale")
    rows = _rendered(opened)
    assert [row for row in rows if row.endswith("scale")] == [f"ToyModel.layers.{i}.scale" for i in range(3)]
    assert set(rows) - {f"ToyModel.layers.{i}.scale" for i in range(3)} == {"ToyModel"} | {
        f"ToyModel.layers.{i}" for i in range(3)
    }  # the matches' ancestors, for context
    assert opened.page.text_content("#filter-status") == "3 of 11 calls match"
    opened.page.press("input[type=search]", "Escape")
    assert len(_rendered(opened)) == 11


def test_rows_show_the_module_class_and_the_detail_pane_where_it_comes_from(pages, open_page):
    opened = open_page(pages["plain"])
    shown = opened.row("ToyModel.layers.1").locator(".cls")
    assert shown.text_content() == "Block"
    assert shown.get_attribute("title") == "tests.explorer.traces.Block"
    assert opened.row("ToyModel.layers.1.proj").locator(".cls").text_content() == "Linear"
    opened.row("ToyModel.layers.1.proj").click()
    facts = opened.page.locator("#detail dl").inner_text().split("\n")
    assert facts[:2] == ["class", "torch.nn.modules.linear.Linear"]


def test_search_finds_calls_by_their_class(pages, open_page):
    opened = open_page(pages["plain"])
    opened.page.fill("input[type=search]", "block")  # no path holds it: the class Block does
    assert opened.page.text_content("#filter-status") == "3 of 11 calls match"
    assert _rendered(opened) == ["ToyModel", *(f"ToyModel.layers.{i}" for i in range(3))]
    opened.page.fill("input[type=search]", "modules.linear")  # only the shown class name is searched
    assert opened.page.text_content("#filter-status") == "0 of 11 calls match"


def test_fold_unfold_and_expand_to_depth(pages, open_page):
    opened = open_page(pages["plain"])
    toggle = opened.row("ToyModel.layers.1").locator(".toggle")
    toggle.click()
    assert opened.row("ToyModel.layers.1.proj").count() == 0
    assert opened.row("ToyModel.layers.1").get_attribute("aria-expanded") == "false"
    toggle.click()
    assert opened.row("ToyModel.layers.1.proj").count() == 1
    opened.page.click("button[data-depth='0']")
    assert _rendered(opened) == ["ToyModel"]
    opened.page.click("button[data-depth='1']")
    assert _rendered(opened) == ["ToyModel", *(f"ToyModel.layers.{i}" for i in range(3)), "ToyModel.head"]
    opened.page.click("button[data-depth='-1']")
    assert len(_rendered(opened)) == 11


def test_keyboard_moves_folds_and_shows_details(pages, open_page):
    opened = open_page(pages["plain"])
    opened.page.focus("#tree")
    for key in ["ArrowDown", "ArrowRight", "ArrowDown"]:  # layers.0, (open:) its first child, the next
        opened.page.keyboard.press(key)
    assert opened.page.text_content("#detail h2") == "ToyModel.layers.0.scale"
    assert "tensor([[[" in opened.page.text_content("#detail pre")
    opened.page.keyboard.press("ArrowLeft")  # a leaf: go to the parent
    opened.page.keyboard.press("ArrowLeft")  # open: fold it
    assert opened.page.text_content("#detail h2") == "ToyModel.layers.0"
    assert opened.row("ToyModel.layers.0.scale").count() == 0


def test_tensor_files_show_a_histogram(pages, open_page):
    opened = open_page(pages["tensors"])
    opened.row("ToyModel.head").click()
    assert opened.page.locator("#detail svg.hist").first.locator("rect").count() == 24


def test_nan_is_badged_and_found_from_a_folded_tree(pages, open_page):
    opened = open_page(pages["nan"])
    opened.page.click("button[data-depth='0']")
    # layers.1.scale, and layers.2, layers.2.proj, layers.2.scale and head, which NaN flowed into
    assert opened.row("ToyModel").locator(".badge.inside").text_content() == "5 inside"
    opened.page.check("#flagged-only")
    assert opened.row("ToyModel.layers.1.scale").locator(".badge.nan").text_content() == "NaN"
    opened.page.uncheck("#flagged-only")
    opened.page.keyboard.press("n")  # the next flagged call, revealed and selected
    assert opened.page.text_content("#detail h2") == "ToyModel.layers.1.scale"


def test_comparison_colours_diverged_calls_and_scrolls_to_the_origin(pages, open_page):
    opened = open_page(pages["compare"], height=500)
    origin = opened.page.locator("[data-origin]")
    assert origin.get_attribute("data-module") == "ToyModel.layers.33.scale"
    assert origin.get_attribute("data-status") == "diverged"
    assert origin.is_visible() and _in_tree_viewport(opened, origin)
    assert opened.row("ToyModel.layers.33.proj").get_attribute("data-status") == "equal"
    levels = [
        int(row.get_attribute("data-level")) for row in opened.page.locator("[data-status=diverged]").all()
    ]
    assert levels and all(1 <= level <= 5 for level in levels)
    assert opened.row("ToyModel.extra.dropout").get_attribute("data-status") == "unmatched"
    assert opened.row("ToyModel.extra.norm").get_attribute("data-status") == "candidate-only"
    assert "divergence origin: ToyModel.layers.33.scale" in opened.page.text_content("#comparison-summary")


def test_the_detail_pane_shows_the_candidates_value_beside_the_references(pages, open_page):
    opened = open_page(pages["compare"], height=500)
    opened.row("ToyModel.layers.33.scale").click()
    detail = opened.page.locator("#detail")
    assert detail.locator(".sides.legend").text_content() == "referencecandidate ToyModel.layers.33.scale"
    (output,) = detail.locator(".pair.differs").all()
    assert output.locator(".verdict").text_content().startswith("differs, paired by name, max abs diff")
    sides = output.locator(".sides > .tensor").all()
    assert [side.locator(".head").text_content() for side in sides] == ["(tensor)  [2, 3, 8] f32"] * 2
    assert sides[0].locator("td").all_text_contents() != sides[1].locator("td").all_text_contents()
    assert (
        detail.locator(".pair:not(.differs) .verdict").first.text_content().startswith("equal")
    )  # the input


def _in_tree_viewport(opened, locator) -> bool:
    box, pane = locator.bounding_box(), opened.page.locator("#tree").bounding_box()
    return pane["y"] <= box["y"] and box["y"] + box["height"] <= pane["y"] + pane["height"]


def test_the_call_that_raised_shows_its_exception(pages, open_page):
    opened = open_page(pages["raised"])
    failed = opened.row("ToyModel.extra.fail")
    assert failed.locator(".badge.exception").get_attribute("title") == "ValueError: shapes do not line up"
    failed.click()
    assert "ValueError: shapes do not line up" in opened.page.text_content("#detail")


@pytest.mark.integration
def test_transformers_own_llama_trace(tmp_path, open_page):
    opened = open_page(write_view(write_upstream_llama_trace(tmp_path, layers=2)))
    assert opened.problems == []
    opened.page.fill("input[type=search]", "q_proj")
    assert opened.page.text_content("#filter-status") == "2 of 32 calls match"
    opened.row("LlamaForCausalLM.model.layers.1.self_attn.q_proj").click()
    assert opened.page.text_content("#detail pre").startswith("tensor([[[")
    # upstream records no classes: the rows and the detail pane show none
    assert opened.page.locator("#tree .cls").count() == 0
    assert "class" not in opened.page.locator("#detail dl dt").all_text_contents()


@pytest.mark.integration
def test_a_llama_trace_of_ours_finds_attention_calls_by_class(tmp_path, open_page):
    opened = open_page(write_view(write_llama_trace(tmp_path, layers=2)))
    assert opened.problems == []
    assert opened.row("LlamaForCausalLM.model.layers.0.mlp").locator(".cls").text_content() == "LlamaMLP"
    opened.page.fill("input[type=search]", "LlamaAttention")
    assert opened.page.text_content("#filter-status") == "2 of 32 calls match"
    matches = opened.page.locator("#tree .row:not(.context)")
    assert [row.get_attribute("data-module") for row in matches.all()] == [
        f"LlamaForCausalLM.model.layers.{layer}.self_attn" for layer in range(2)
    ]
