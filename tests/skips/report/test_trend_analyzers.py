"""The trend says which analyzer made each side, and never reports as the tree's what the analyzer moved."""

import pytest

from model_debugging.skips.report.analyzers import commit_to_rescan
from model_debugging.skips.report.command import main
from model_debugging.skips.results.provenance import provenance_from_json

from .conftest import provenance

OLD, NEW = provenance("a", "1" * 40), provenance("b", "2" * 40)
RESCAN = provenance("b", "1" * 40)  # last week's commit, scanned by this week's analyzer
# last week, by the old analyzer: bert's no-op override of test_training was not seen as a skip
LAST_WEEK = {"test_training": (["bert", "llama"], {})}
# the same commit, by the new analyzer: it is
LAST_WEEK_NOW = {"test_training": (["llama"], {"bert": "no training head"})}
# this week, by the new analyzer: the tree added vit, which skips it
THIS_WEEK = {"test_training": (["llama"], {"bert": "no training head", "vit": "frozen backbone"})}


def report(write_scan, tmp_path, previous, current, *extra):
    out = tmp_path / "trend.md"
    code = main(["--previous", previous, "--current", current, *extra, "--markdown", str(out)])
    return code, out.read_text(encoding="utf-8") if out.exists() else ""


def first_lines(markdown: str, count: int) -> list[str]:
    """The summary's first lines (after the title and a blank line)."""
    return [line for line in markdown.splitlines()[1:] if line][:count]


def test_one_analyzer_on_both_sides_says_so_and_every_change_is_the_tree_s(write_scan, tmp_path):
    previous = write_scan("old", LAST_WEEK_NOW, RESCAN)
    code, markdown = report(write_scan, tmp_path, previous, write_scan("new", THIS_WEEK, NEW))
    assert code == 0
    (line,) = first_lines(markdown, 1)
    assert line.startswith("Both scans by the same analyzer (model-debugging 0.1.0, sources bbbbbbbbbbbb")
    assert "every change below is the tree's" in line and "commit 111111111111" in line
    assert (
        "### Newly skipped (1)" in markdown
        and "| test_training | vit | new model | frozen backbone |" in markdown
    )
    assert "Analyzer change" not in markdown and "⚠️" not in markdown


def test_two_analyzers_without_a_rescan_warn_first_and_never_call_a_change_the_tree_s(write_scan, tmp_path):
    previous, current = write_scan("old", LAST_WEEK, OLD), write_scan("new", THIS_WEEK, NEW)
    code, markdown = report(write_scan, tmp_path, previous, current)
    assert code == 0
    changed, mixed = first_lines(markdown, 2)
    assert changed == (
        "⚠️ The analyzer changed between the two scans: previous model-debugging 0.1.0, sources "
        "aaaaaaaaaaaa, settings 555555555555; current model-debugging 0.1.0, sources bbbbbbbbbbbb, "
        "settings 555555555555."
    )
    assert "mix the tree's with the analyzer's" in mixed and "--previous_rescanned" in mixed
    # both skips are listed, under a title that does not say which made them
    assert "### Newly skipped (tree or analyzer) (2)" in markdown
    assert "### Newly skipped (2)" not in markdown


def test_a_result_without_provenance_is_an_unknown_analyzer_a_warning_not_an_error(write_scan, tmp_path):
    previous, current = write_scan("old", LAST_WEEK, None), write_scan("new", THIS_WEEK, NEW)
    code, markdown = report(write_scan, tmp_path, previous, current)
    assert code == 0
    changed, mixed = first_lines(markdown, 2)
    assert changed.startswith("⚠️ Not known whether one analyzer made both scans: previous unknown analyzer (")
    assert "The previous result records no commit to scan again, so they cannot be separated." in mixed
    assert "### Newly skipped (tree or analyzer) (2)" in markdown


def test_two_results_without_provenance_say_so_once(write_scan, tmp_path):
    """The pinned scans of the 2024, 2025 and 2026 snapshots (and upstream's results) record no
    analyzer: the first line said "previous unknown analyzer (the result does not record it: ...);
    current unknown analyzer (the result does not record it: ...)", the same parenthesis twice."""
    previous, current = write_scan("old", LAST_WEEK, None), write_scan("new", THIS_WEEK, None)
    code, markdown = report(write_scan, tmp_path, previous, current)
    assert code == 0
    assert first_lines(markdown, 1)[0] == (
        "⚠️ Not known whether one analyzer made both scans: neither result records the analyzer that made it "
        "(written before results did, or by another scanner)."
    )


def test_with_the_previous_commit_rescanned_the_analyzer_s_changes_are_listed_apart(write_scan, tmp_path):
    previous, current = write_scan("old", LAST_WEEK, OLD), write_scan("new", THIS_WEEK, NEW)
    rescan = write_scan("rescan", LAST_WEEK_NOW, RESCAN)
    code, markdown = report(write_scan, tmp_path, previous, current, "--previous_rescanned", rescan)
    assert code == 0
    changed, split = first_lines(markdown, 2)
    assert changed.startswith("⚠️ The analyzer changed")
    assert "The changes below are the tree's: the previous scan's commit 111111111111 scanned again" in split
    tree = markdown[markdown.index("### Newly skipped (1)") : markdown.index("### No longer skipped")]
    assert "| test_training | vit | new model | frozen backbone |" in tree and "bert" not in tree
    moved = markdown[markdown.index("### Analyzer change: Newly skipped (1)") :]
    assert "| test_training | bert | ran | no training head |" in moved.split("###")[1]
    assert "Moved by the analyzer change alone: New skips: 1 (0 by new models)" in markdown


def test_two_analyzers_on_one_commit_list_every_change_as_the_analyzer_s(write_scan, tmp_path):
    previous = write_scan("old", LAST_WEEK, OLD)
    code, markdown = report(write_scan, tmp_path, previous, write_scan("new", LAST_WEEK_NOW, RESCAN))
    assert code == 0
    assert "Both scans read commit 111111111111: the tree did not change" in first_lines(markdown, 2)[1]
    assert "### Newly skipped (0)" in markdown
    assert "### Analyzer change: Newly skipped (1)" in markdown


@pytest.mark.parametrize(
    "rescan, message",
    [
        (provenance("a", "1" * 40), "was made by model-debugging 0.1.0, sources aaaaaaaaaaaa"),
        (
            provenance("b", "3" * 40),
            "read commit 333333333333, not the --previous result's commit 111111111111",
        ),
        (None, "records no provenance"),
    ],
)
def test_a_rescan_that_is_not_the_previous_commit_by_the_current_analyzer_is_refused(
    write_scan, tmp_path, capsys, rescan, message
):
    previous, current = write_scan("old", LAST_WEEK, OLD), write_scan("new", THIS_WEEK, NEW)
    path = write_scan("rescan", LAST_WEEK_NOW, rescan)
    code, markdown = report(write_scan, tmp_path, previous, current, "--previous_rescanned", path)
    assert (code, markdown) == (2, "")
    (line,) = capsys.readouterr().err.splitlines()
    assert f"--previous_rescanned {path} " in line and message in line


def test_a_rescan_needs_the_previous_result(write_scan, capsys):
    rescan = write_scan("rescan", LAST_WEEK_NOW, RESCAN)
    assert main(["--current", write_scan("new", THIS_WEEK, NEW), "--previous_rescanned", rescan]) == 2
    assert "--previous_rescanned needs --previous" in capsys.readouterr().err


@pytest.mark.parametrize(
    "made_by, message",
    [
        ({**OLD, "commit": "main"}, "key 'provenance' 'commit' must be a commit id or null, got 'main'"),
        ({**OLD, "analyzer_digest": 3}, "key 'provenance' 'analyzer_digest' must be 64 hex digits, got 3"),
        ("a", "key 'provenance' must be an object, got str"),
    ],
)
def test_a_bad_provenance_names_the_file_test_and_key(write_scan, capsys, made_by, message):
    previous = write_scan("old", LAST_WEEK, made_by)
    assert main(["--previous", previous, "--current", write_scan("new", THIS_WEEK, NEW)]) == 2
    assert f"{previous}: test 'test_training': {message}" in capsys.readouterr().err


def test_a_file_joining_two_scans_is_refused(write_scan, tmp_path, capsys):
    path = write_scan("joined", {"test_a": (["bert"], {}), "test_b": (["bert"], {})}, OLD)
    text = (tmp_path / "joined.json").read_text(encoding="utf-8")
    (tmp_path / "joined.json").write_text(text.replace('"1111', '"2222', 1), encoding="utf-8")
    assert main(["--current", path]) == 2
    assert "tests 'test_a' and 'test_b' differ in key 'provenance'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "previous, current, expected",
    [
        (OLD, NEW, ("1" * 40, "the analyzer changed")),
        (RESCAN, NEW, (None, "same analyzer")),
        (None, NEW, (None, "records no commit")),
        ({**OLD, "commit": None}, NEW, (None, "records no commit")),
        (OLD, RESCAN, (None, "same commit")),
    ],
)
def test_the_workflow_rescans_the_previous_commit_only_when_that_separates_the_changes(
    previous, current, expected
):
    commit, why = commit_to_rescan(
        *(provenance_from_json(side) if side else None for side in (previous, current))
    )
    assert commit == expected[0] and expected[1] in why
