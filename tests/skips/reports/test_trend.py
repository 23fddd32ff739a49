from model_debugging.reporting import load_scan_results
from model_debugging.skips.trend import compute_trend

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
    assert (first["previous"], first["current"], first["change"]) == (0.3333, 0.6667, 0.3334)


def test_min_change_hides_small_moves(write_scan):
    changes = trend_of(write_scan, min_proportion_change=0.334).proportion_changes
    assert changes.empty


def test_newly_skipped_with_reason_and_new_model_note(write_scan):
    rows = trend_of(write_scan).newly_skipped.to_dict("records")
    assert rows == [
        {"test": "test_inputs_embeds", "model": "llama", "reason": "uses cache only", "note": ""},
        {"test": "test_resize", "model": "gemma", "reason": "no embeddings", "note": "new model"},
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
        {"test": "test_new_thing", "origin": "common", "skipped": "1/2", "skipped_proportion": 0.5}
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
