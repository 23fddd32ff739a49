import json

import pytest

from model_debugging.reporting.csv_output import render_csv, write_csv
from model_debugging.skips.report.scan_results import ScanResultsError, load_scan_results

RESULT = {
    "test_inputs_embeds": {
        "origin": "common",
        "models_ran": ["bert"],
        "models_skipped": ["llama", "vit"],
        "skipped_proportion": 0.6667,
        "reasons_skipped": ["llama: uses: colons", "vit: ViT does not use inputs_embeds"],
        "models_not_applicable": ["whisper"],
    },
    "test_training": {
        "origin": "GenerationMixin",
        "models_ran": ["bert", "llama", "vit"],
        "models_skipped": [],
        "skipped_proportion": 0,
        "reasons_skipped": [],
    },
}


def write(tmp_path, data, name="scan.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_one_row_per_test_with_upstream_extra_and_derived_columns(tmp_path):
    frame = load_scan_results(write(tmp_path, RESULT))
    assert frame.index.tolist() == ["test_inputs_embeds", "test_training"]
    row = frame.loc["test_inputs_embeds"]
    assert row["origin"] == "common" and row["models_not_applicable"] == ["whisper"]
    assert (row["ran_count"], row["skipped_count"]) == (1, 2)
    assert row["skip_reasons"] == {"llama": "uses: colons", "vit": "ViT does not use inputs_embeds"}
    assert frame.loc["test_training", "skipped_proportion"] == 0.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"test_a": {"origin": "common",\n  oops}', ":2:3: invalid JSON"),
        ("[1, 2]", "expected an object keyed by test name, got list"),
        ({"test_a": {"origin": "common"}}, "test 'test_a': missing key 'models_ran'"),
        ({"test_a": dict(RESULT["test_training"], models_ran="bert")}, "key 'models_ran' must be a list"),
        (
            {"test_a": dict(RESULT["test_training"], skipped_proportion="0.5")},
            "'skipped_proportion' must be a number",
        ),
    ],
)
def test_bad_files_are_named_in_the_error(tmp_path, content, message):
    path = write(tmp_path, content)
    with pytest.raises(ScanResultsError, match=str(path).replace("\\", "\\\\")) as error:
        load_scan_results(path)
    assert message in str(error.value)


def test_missing_file(tmp_path):
    with pytest.raises(ScanResultsError, match="cannot read scan result"):
        load_scan_results(tmp_path / "nope.json")


def test_empty_result_gives_empty_frame(tmp_path):
    frame = load_scan_results(write(tmp_path, {}))
    assert frame.empty and "skip_reasons" in frame.columns


def test_csv_flattens_lists_and_keeps_the_test_index(tmp_path):
    frame = load_scan_results(write(tmp_path, RESULT))
    target = write_csv(
        frame[["models_skipped", "skipped_proportion"]], tmp_path / "out" / "scan.csv", index=True
    )
    assert target.read_text(encoding="utf-8").splitlines() == [
        "test,models_skipped,skipped_proportion",
        "test_inputs_embeds,llama; vit,0.6667",
        "test_training,,0.0",
    ]
    assert render_csv([{"a": {"x": 1}, "b": "q,r"}]).splitlines() == ["a,b", 'x: 1,"q,r"']


def test_skip_plot_writes_an_image(tmp_path):
    from model_debugging.skips.report.skip_plot import plot_skipped_proportion

    frame = load_scan_results(write(tmp_path, RESULT))
    target = plot_skipped_proportion(frame, tmp_path / "skips.svg", top=1)
    assert "<svg" in target.read_text(encoding="utf-8")
