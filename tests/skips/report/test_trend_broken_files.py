"""The weekly trend names the files a scan could not collect, read from the errors file beside each result.

A week in which ``tests/test_modeling_common.py`` broke shows in the result alone as removed tests
and skips gone; the summary says which file broke, and which files fail to import because of it.
"""

import json

import pytest

from model_debugging.skips.command import main as scan
from model_debugging.skips.report.command import main as report

from .git_trees import edit


@pytest.fixture
def two_weeks(whole_tree, tmp_path):
    """Scans of the whole tree before and after a change that breaks the shared common test file."""
    assert scan(["--repo", str(whole_tree), "--output_dir", str(tmp_path / "last_week")]) == 0
    edit(
        whole_tree,
        "tests/test_modeling_common.py",
        "    def test_forward(self):",
        "  def test_forward(self):",
    )
    assert scan(["--repo", str(whole_tree), "--output_dir", str(tmp_path / "this_week")]) == 0
    return tmp_path / "last_week", tmp_path / "this_week"


def trend(previous, current, capsys) -> str:
    capsys.readouterr()
    args = ["--current", str(current / "all_tests_scan_result.json")]
    if previous is not None:
        args += ["--previous", str(previous / "all_tests_scan_result.json")]
    assert report(args) == 0
    return capsys.readouterr().out


def test_the_trend_names_the_broken_file_and_those_importing_it(two_weeks, capsys):
    out = trend(*two_weeks, capsys)
    assert (
        "⚠️ 1 scanned file(s) no longer parse, so pytest collects none of their tests: "
        "tests/test_modeling_common.py, line 9: syntax error: unindent does not match any outer indentation level."
    ) in out
    assert (
        "⚠️ pytest can no longer import 4 scanned file(s), so it collects none of their tests: 4 import "
        "tests/test_modeling_common.py, directly or not, whose import fails at line 9"
    ) in out
    assert "removed tests: 3." in out


def test_files_broken_in_both_weeks_are_not_new(two_weeks, capsys):
    _, this_week = two_weeks
    out = trend(this_week, this_week, capsys)
    assert "no longer" not in out
    assert "5 other scanned file(s) could not be collected in either scan." in out


def test_without_a_previous_scan_the_broken_files_are_still_named(two_weeks, capsys):
    out = trend(None, two_weeks[1], capsys)
    assert "⚠️ 1 scanned file(s) do not parse" in out and "⚠️ pytest cannot import 4 scanned file(s)" in out


def test_a_result_copied_without_its_errors_file_gives_the_trend_alone(two_weeks, capsys):
    last_week, this_week = two_weeks
    (this_week / "all_tests_scan_errors.json").unlink()
    out = trend(last_week, this_week, capsys)
    assert "parse" not in out and "removed tests: 3." in out


def test_a_malformed_errors_file_is_a_one_line_error(two_weeks, capsys):
    last_week, this_week = two_weeks
    errors = this_week / "all_tests_scan_errors.json"
    entries = json.loads(errors.read_text(encoding="utf-8"))
    entries[1]["line"] = "7"
    errors.write_text(json.dumps(entries), encoding="utf-8")
    args = ["--previous", str(last_week / "all_tests_scan_result.json")]
    assert report([*args, "--current", str(this_week / "all_tests_scan_result.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{errors}: entry 1: key 'line' must be an integer, got '7'" in err


def test_an_output_onto_the_errors_file_is_refused(two_weeks, capsys):
    last_week, this_week = two_weeks
    errors = this_week / "all_tests_scan_errors.json"
    kept = errors.read_bytes()
    args = ["--current", str(this_week / "all_tests_scan_result.json"), "--markdown", str(errors)]
    assert report(args) == 2
    assert "errors file beside --current" in capsys.readouterr().err
    assert errors.read_bytes() == kept
