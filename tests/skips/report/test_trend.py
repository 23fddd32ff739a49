from model_debugging.skips.report.scan_results import load_scan_results
from model_debugging.skips.report.trend import compute_trend
from model_debugging.skips.report.trend_report import change_text

PREVIOUS = {
    "test_inputs_embeds": (["bert", "llama"], {"vit": "ViT does not use inputs_embeds"}),
    "test_training": (["bert", "llama", "vit"], {}),
    "test_old_api": (["bert"], {"llama": "removed"}),
    "test_resize": (["bert", "vit"], {"llama": "tied weights"}),
}
CURRENT = {
    "test_inputs_embeds": (["bert"], {"vit": "ViT does not use inputs_embeds", "llama": "uses cache only"}),
    "test_training": (["bert", "llama", "vit", "gemma"], {}),
    "test_resize": (["bert", "vit", "llama"], {"gemma": "no embeddings"}),
    "test_new_thing": (["bert"], {"vit": "not yet"}),
}


def trend_of(write_scan, previous=PREVIOUS, current=CURRENT, **kwargs):
    return compute_trend(
        load_scan_results(write_scan("previous", previous)),
        load_scan_results(write_scan("current", current)),
        **kwargs,
    )


def test_changed_proportions_largest_move_first(write_scan):
    changes = trend_of(write_scan).proportion_changes
    assert changes["test"].tolist() == ["test_inputs_embeds", "test_resize"]
    first = changes.iloc[0]
    assert (first["previous"], first["current"], first["change"]) == (1 / 3, 2 / 3, 2 / 3 - 1 / 3)


def test_min_change_hides_small_moves(write_scan):
    changes = trend_of(write_scan, min_proportion_change=0.334).proportion_changes
    assert changes.empty


def test_newly_skipped_with_reason_and_new_model_note(write_scan):
    rows = trend_of(write_scan).newly_skipped.to_dict("records")
    assert rows == [
        {
            "test": "test_inputs_embeds",
            "model": "llama",
            "before": "ran",
            "reason": "uses cache only",
        },
        {
            "test": "test_resize",
            "model": "gemma",
            "before": "new model",
            "reason": "no embeddings",
        },
    ]


def test_no_longer_skipped_says_what_happens_now(write_scan):
    previous = dict(
        PREVIOUS, test_gone_model=(["bert"], {"opt": "legacy"}), test_vision=(["bert"], {"vit": "no pixels"})
    )
    current = dict(CURRENT, test_gone_model=(["bert"], {}), test_vision=(["bert"], {}))
    rows = trend_of(write_scan, previous, current).no_longer_skipped.to_dict("records")
    assert rows == [
        {"test": "test_gone_model", "model": "opt", "previous reason": "legacy", "now": "model removed"},
        {"test": "test_resize", "model": "llama", "previous reason": "tied weights", "now": "runs"},
        {"test": "test_vision", "model": "vit", "previous reason": "no pixels", "now": "not applicable"},
    ]


def test_new_and_removed_tests(write_scan):
    trend = trend_of(write_scan)
    assert trend.new_tests.to_dict("records") == [
        {
            "test": "test_new_thing",
            "origin": "common",
            "skipped": "1/2",
            "undecided": 0,
            "skipped_proportion": 0.5,
            "needs": "",
        }
    ]
    assert trend.removed_tests["test"].tolist() == ["test_old_api"]


def test_headline_is_most_skipped_first(write_scan):
    trend = trend_of(write_scan)
    assert trend.most_skipped["test"].tolist()[:2] == ["test_inputs_embeds", "test_new_thing"]
    assert (trend.previous_tests, trend.current_tests, trend.current_models) == (4, 4, 4)


def test_without_previous_only_the_headline_has_rows(write_scan):
    trend = compute_trend(None, load_scan_results(write_scan("current", CURRENT)))
    assert trend.previous_tests is None
    assert trend.newly_skipped.empty and trend.new_tests.empty and trend.proportion_changes.empty
    assert len(trend.most_skipped) == 4


# test_compile: undecided everywhere before (a version guard read as unknown), decided now;
# test_sdpa: llama's skip became undecided, bert's run became undecided, vit stays undecided
UNDECIDED_BEFORE = {
    "test_compile": ([], {}, {"bert": "torch version", "llama": "torch version", "vit": "torch version"}),
    "test_sdpa": (["bert"], {"llama": "no SDPA"}, {"vit": "`x` is only known at run time"}),
    "test_integration": ([], {}),  # an integration class of a common file: applies to no model
}
UNDECIDED_AFTER = {
    "test_compile": (["bert"], {"llama": "no compile class", "vit": "no compile class"}, {}),
    "test_sdpa": ([], {}, {"bert": "`y` is only known at run time", "llama": "`z`", "vit": "`x`"}),
    "test_integration": ([], {}),
    "test_integration_new": ([], {}),
}


def test_a_pair_undecided_on_either_side_is_never_newly_or_no_longer_skipped(write_scan):
    trend = trend_of(write_scan, UNDECIDED_BEFORE, UNDECIDED_AFTER)
    assert trend.newly_skipped.empty and trend.no_longer_skipped.empty
    assert trend.now_decided.to_dict("records") == [
        {
            "test": "test_compile",
            "model": "bert",
            "now": "ran",
            "reason": "",
            "undecided before because": "torch version",
        },
        {
            "test": "test_compile",
            "model": "llama",
            "now": "skipped",
            "reason": "no compile class",
            "undecided before because": "torch version",
        },
        {
            "test": "test_compile",
            "model": "vit",
            "now": "skipped",
            "reason": "no compile class",
            "undecided before because": "torch version",
        },
    ]
    assert trend.now_undecided.to_dict("records") == [
        {"test": "test_sdpa", "model": "bert", "before": "ran", "because": "`y` is only known at run time"},
        {"test": "test_sdpa", "model": "llama", "before": "skipped", "because": "`z`"},
    ]


def test_a_test_without_a_decided_model_has_no_share_and_tests_of_no_model_are_left_out(write_scan):
    trend = trend_of(write_scan, UNDECIDED_BEFORE, UNDECIDED_AFTER)
    changes = trend.proportion_changes.astype(object).fillna("n/a")  # NaN: no model decided
    assert changes[["test", "previous", "current", "undecided before", "undecided now"]].values.tolist() == [
        ["test_compile", "n/a", 2 / 3, 3, 0],
        ["test_sdpa", 0.5, "n/a", 1, 3],
    ]
    assert trend.new_tests.empty  # test_integration_new applies to no model
    assert trend.most_skipped.astype(object).fillna("n/a").values.tolist() == [
        ["test_compile", "common", "2/3", 0, 2 / 3, ""],
        ["test_sdpa", "common", "0/0", 3, "n/a", ""],
    ]


def test_a_share_that_moves_below_the_fourth_digit_still_moved(write_scan):
    """1 of 408 models, then 1 of 410 (two new models run the test): both 0.0024 once rounded."""
    ran = [f"model{index:03}" for index in range(407)]
    previous = {"test_x": (ran, {"vit": "no pixels"})}
    current = {"test_x": ([*ran, "new_a", "new_b"], {"vit": "no pixels"})}
    changes = trend_of(write_scan, previous, current).proportion_changes
    assert changes[["test", "previous", "current"]].values.tolist() == [["test_x", 1 / 408, 1 / 410]]
    # and the report says by how much, not "-0.0%"
    assert change_text(changes.at[0, "change"]) == "-0.0012%"
    assert [change_text(value) for value in (0.25, -0.0006, 0.0)] == ["+25.0%", "-0.1%", "+0.0%"]
