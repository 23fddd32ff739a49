"""How pytest's junit XML becomes the truth the scanner is scored against (benchmarks/): a case
stopped by pytest-timeout ran, an import placeholder's failures are left out, a model a stopped
run did not finish is left out, a failure on a leaked meta device or offline Hub access is left out, and a wrong
verdict is listed as one."""

import gzip

import pytest

from benchmarks.check_against_pytest import pytest_verdicts, score
from benchmarks.pytest_truth import TruthInputError, TruthRow, main, read_truth, rows_from_junit

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.models.alpha.test_modeling_alpha.AlphaModelTest" name="test_slow_one">
  <failure message="Failed: Timeout (&gt;10.0s) from pytest-timeout.">stack</failure></testcase>
<testcase classname="tests.models.alpha.test_modeling_alpha.AlphaModelTest" name="test_sdpa">
  <skipped type="pytest.skip" message="AlphaModel does not support SDPA" /></testcase>
<testcase classname="tests.models.beta.test_modeling_beta.BetaModelTest" name="test_sdpa">
  <failure message="ImportError: BetaModel requires the torchaudio library but it was not found">x</failure></testcase>
<testcase classname="tests.models.beta.test_modeling_beta.BetaModelTest" name="test_slow_one" />
<testcase classname="tests.models.gamma.test_modeling_gamma.GammaModelTest" name="test_sdpa" />
<testcase classname="" name="tests.models.delta.test_modeling_delta"><error message="collection failure" /></testcase>
</testsuite></testsuites>
"""
# gamma's test_slow_one was collected but never ran: the run stopped before it.
COLLECTED = """tests/models/alpha/test_modeling_alpha.py::AlphaModelTest::test_slow_one
tests/models/gamma/test_modeling_gamma.py::GammaModelTest::test_sdpa
tests/models/gamma/test_modeling_gamma.py::GammaModelTest::test_slow_one
"""


@pytest.fixture
def junit(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    return path


def test_a_timeout_is_its_own_outcome_and_counts_as_ran(junit):
    rows, _ = rows_from_junit([str(junit)])
    outcomes = {(row.model, row.test): row.outcome for row in rows}
    assert outcomes["alpha", "test_slow_one"] == "timeout"
    verdicts = pytest_verdicts(rows, ["alpha"], ["test_slow_one", "test_sdpa", "test_other"])
    assert verdicts["alpha", "test_slow_one"].verdict == "ran"
    assert verdicts["alpha", "test_slow_one"].only_timeouts
    assert verdicts["alpha", "test_sdpa"].verdict == "skipped"
    assert verdicts["alpha", "test_other"].verdict == "not_collected"


def test_failures_of_an_import_placeholder_are_left_out_but_its_passes_still_ran(junit):
    rows, _ = rows_from_junit([str(junit)])
    verdicts = pytest_verdicts(rows, ["beta"], ["test_sdpa", "test_slow_one"])
    assert verdicts["beta", "test_sdpa"].verdict == "placeholder"
    assert verdicts["beta", "test_slow_one"].verdict == "ran"


def test_a_model_the_run_did_not_finish_is_left_out(junit, tmp_path):
    tests, listing, output = tmp_path / "tests.txt", tmp_path / "collected.txt", tmp_path / "truth.csv.gz"
    tests.write_text("test_sdpa test_slow_one")
    listing.write_text(COLLECTED)
    argv = ["--junit", str(junit), "--tests_file", str(tests), "--models", "alpha", "beta", "gamma", "delta"]
    assert main([*argv, "--collected", str(listing), "--label", "x", "--output", str(output)]) == 0
    header, rows = read_truth(output)
    assert header["models"] == "alpha beta"
    assert header["uncollected"] == "delta"  # its module failed to import (xdist names it in the case name)
    assert header["incomplete"] == "gamma"
    assert {row.model for row in rows} == {"alpha", "beta"}


def test_wrong_verdicts_are_listed_first_and_undecided_pairs_last(junit):
    rows, _ = rows_from_junit([str(junit)])
    truth = pytest_verdicts(rows, ["alpha", "gamma"], ["test_sdpa", "test_slow_one", "test_other"])
    scanned = {
        ("alpha", "test_sdpa"): ("undecided", "if x: skip"),
        ("alpha", "test_slow_one"): ("skipped", "runtime: no"),
        ("gamma", "test_sdpa"): ("ran", ""),
        ("gamma", "test_other"): ("ran", ""),
    }
    per_test, lines = score(truth, scanned)
    assert [line.split(" / ")[0] for line in lines] == ["WRONG alpha", "WRONG gamma", "UNDECIDED alpha"]
    assert "timeout only" in lines[0]
    assert per_test["test_other"]["not collected, called ran"] == 1
    assert per_test["test_sdpa"]["agree"] == 1


def test_unreadable_inputs_are_one_error_naming_the_file(tmp_path, capsys):
    broken = tmp_path / "broken.xml"
    broken.write_text("<testsuite>")
    tests = tmp_path / "tests.txt"
    tests.write_text("test_sdpa")
    argv = [
        "--junit",
        str(broken),
        "--tests_file",
        str(tests),
        "--models",
        "a",
        "--output",
        str(tmp_path / "o.gz"),
    ]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(f"error: {broken}: not a readable junit XML file")
    assert not (tmp_path / "o.gz").exists()
    truth = tmp_path / "truth.csv.gz"
    truth.write_bytes(
        gzip.compress(
            b"# tests: test_sdpa\n# models: a\nmodel,test,test_class,outcome,reason\na,b,C,exploded,\n"
        )
    )
    with pytest.raises(TruthInputError, match="line 4: unknown outcome 'exploded'"):
        read_truth(truth)


def test_cases_of_a_parametrized_test_belong_to_the_test(tmp_path):
    junit = tmp_path / "junit.xml"
    cases = "".join(
        f'<testcase classname="tests.models.alpha.test_modeling_alpha.AlphaModelTest" name="{name}" />'
        for name in (
            "test_greedy_0_random",
            "test_greedy_1_same",
            "test_sdpa[fp32]",
            "test_greedy_search_other",
        )
    )
    junit.write_text(f"<testsuite>{cases}</testsuite>")
    rows, _ = rows_from_junit([str(junit)], {"test_greedy", "test_sdpa"})
    assert [row.test for row in rows] == ["test_greedy", "test_greedy", "test_sdpa"]


def test_a_class_skipped_for_the_machine_makes_the_pair_depend_on_the_machine():
    rows = [
        TruthRow("alpha", "test_flex", "AlphaModelTest", "skipped", "test requires accelerator"),
        TruthRow("alpha", "test_flex", "AlphaDecoderTest", "skipped", "Decoder cannot keep gradients"),
        TruthRow("beta", "test_flex", "BetaDecoderTest", "skipped", "Decoder cannot keep gradients"),
    ]
    verdicts = pytest_verdicts(rows, ["alpha", "beta"], ["test_flex"])
    assert verdicts["alpha", "test_flex"].verdict == "environment"  # the first class runs on a GPU machine
    assert verdicts["beta", "test_flex"].verdict == "skipped"


def test_a_failure_on_a_meta_device_an_earlier_test_leaked_is_left_out():
    leaked = "NotImplementedError: Cannot copy out of meta tensor; no data!"
    rows = [
        TruthRow("alpha", "test_cache", "AlphaModelTest", "failed", leaked),
        TruthRow("beta", "test_cache", "BetaModelTest", "failed", leaked),
        TruthRow("beta", "test_cache", "BetaDecoderTest", "passed", ""),
        TruthRow("gamma", "test_cache", "GammaModelTest", "failed", "AssertionError: outputs differ"),
    ]
    verdicts = pytest_verdicts(rows, ["alpha", "beta", "gamma"], ["test_cache"])
    assert verdicts["alpha", "test_cache"].verdict == "leaked"  # never reached its skip checks
    assert verdicts["beta", "test_cache"].verdict == "ran"  # another class ran it
    assert verdicts["gamma", "test_cache"].verdict == "ran"  # a failure of its own
    per_test, lines = score(verdicts, {("alpha", "test_cache"): ("skipped", "runtime: no cache")})
    assert per_test["test_cache"]["leaked"] == 1
    assert not any("alpha" in line for line in lines)


def test_a_failure_to_reach_the_hub_offline_is_left_out():
    offline = "OSError: We couldn't connect to 'https://huggingface.co' to load the files"
    rows = [
        TruthRow("alpha", "test_sdpa", "AlphaModelTest", "failed", offline),
        TruthRow("beta", "test_sdpa", "BetaModelTest", "failed", offline),
        TruthRow("beta", "test_sdpa", "BetaDecoderTest", "skipped", "BetaDecoder does not support SDPA"),
    ]
    verdicts = pytest_verdicts(rows, ["alpha", "beta"], ["test_sdpa"])
    assert verdicts["alpha", "test_sdpa"].verdict == "offline"  # never reached its skip checks
    assert verdicts["beta", "test_sdpa"].verdict == "offline"  # its other class skipped: still unknown
    per_test, lines = score(verdicts, {("alpha", "test_sdpa"): ("skipped", "runtime: no SDPA")})
    assert per_test["test_sdpa"]["offline"] == 2
    assert lines == []


def test_a_model_rerun_alone_takes_every_row_from_the_rerun(junit, tmp_path):
    """gamma was stopped before its test_slow_one and alpha's case timed out in the group run: run
    again alone, their rows come from the rerun only, and gamma is no longer incomplete."""
    rerun = tmp_path / "rerun.xml"
    rerun.write_text(
        "<testsuite>"
        '<testcase classname="tests.models.gamma.test_modeling_gamma.GammaModelTest" name="test_sdpa">'
        '<skipped type="pytest.skip" message="GammaModel does not support SDPA" /></testcase>'
        '<testcase classname="tests.models.gamma.test_modeling_gamma.GammaModelTest" name="test_slow_one" />'
        '<testcase classname="tests.models.alpha.test_modeling_alpha.AlphaModelTest" name="test_slow_one" />'
        "</testsuite>"
    )
    tests, listing, output = tmp_path / "tests.txt", tmp_path / "collected.txt", tmp_path / "truth.csv.gz"
    tests.write_text("test_sdpa test_slow_one")
    listing.write_text(COLLECTED)
    argv = ["--junit", str(junit), "--tests_file", str(tests), "--models", "alpha", "beta", "gamma"]
    argv += ["--collected", str(listing), "--rerun", str(rerun), "--label", "x", "--output", str(output)]
    assert main(argv) == 0
    header, rows = read_truth(output)
    assert header["models"] == "alpha beta gamma"
    assert header["incomplete"] == ""
    assert header["rerun"] == "alpha gamma"
    outcomes = {(row.model, row.test): row.outcome for row in rows}
    assert outcomes == {
        ("alpha", "test_slow_one"): "passed",  # the group run's timeout and skip are gone
        ("beta", "test_sdpa"): "failed",
        ("beta", "test_slow_one"): "passed",
        ("gamma", "test_sdpa"): "skipped",
        ("gamma", "test_slow_one"): "passed",
    }
