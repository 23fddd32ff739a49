"""Reports of runs as users have them: each kind read and named, and every bad one refused by name.

The reports are written here as pytest and transformers' CI write them (the real runs are in
``test_observed_runs.py``): junit XML with a case per item, ``-rA`` summaries with skips folded by
location, collated JSON, our plugin's record.
"""

import json
import subprocess

import pytest

from model_debugging import scan_repository
from model_debugging.skips.command import main as scan_main
from model_debugging.skips.observed import ReportError, read_reports
from model_debugging.skips.report.scan_results import ScanResultsError, scan_results_frame
from tests.skips.conftest import write_tree
from tests.support.observed_tree import observed_tree_files
from tests.support.pytest_runs import run_pytest

MODEL = """
import unittest

from parameterized import parameterized

from ...test_modeling_common import ModelTesterMixin


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    @unittest.skip("broken")
    def test_training(self):
        pass

    @parameterized.expand([("fp32",), ("fp16",)])
    def test_forward(self, dtype):
        self.assertTrue(dtype)

    def test_own(self):
        self.assertTrue(True)
"""
SUMMARY_HEADER = "=========================== short test summary info ============================\n"


@pytest.fixture
def repo(make_repo):
    return make_repo(
        {
            "tests/models/alpha/test_modeling_alpha.py": MODEL.format(name="Alpha"),
            "tests/models/beta/test_modeling_beta.py": MODEL.format(name="Beta"),
        }
    )


def junit(*cases: str) -> str:
    return f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">{"".join(cases)}</testsuite></testsuites>'


def case(model: str, name: str, inner: str = "", classname: str | None = None) -> str:
    classname = classname or f"tests.models.{model}.test_modeling_{model}.{model.capitalize()}ModelTest"
    return f'<testcase classname="{classname}" name="{name}" time="0.1">{inner}</testcase>'


def observe(repo, tmp_path, name: str, text: str, **scan_options):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    result = scan_repository(repo, cache_dir=tmp_path / "cache", jobs=1, observed=[path], **scan_options)
    return result.combined


def test_expanded_cases_and_parametrized_items_are_named_after_their_test(repo, tmp_path):
    join = observe(
        repo,
        tmp_path,
        "junit.xml",
        junit(
            case("alpha", "test_forward_0_fp32"),
            case("alpha", "test_forward_1_fp16", '<skipped type="pytest.skip" message="no fp16">x</skipped>'),
            case("beta", "test_training[cpu]"),
            case("beta", "test_own"),  # the model's own test: no pair of the scan
        ),
    )
    assert {key: pair.status for key, pair in join.pairs.items()} == {
        ("test_forward", "alpha"): "ran",
        ("test_training", "beta"): "ran",
    }
    assert [seen.case for seen in join.pairs["test_forward", "alpha"].seen] == [
        "test_forward_0_fp32",
        "test_forward_1_fp16",
    ]
    (tally,) = join.tallies
    assert (tally.mapped, tally.other, tally.unmapped) == (3, 1, {})


def test_folded_skips_are_named_from_the_checkout_and_the_model_a_ci_folder_covers(repo, tmp_path):
    folder = tmp_path / "single-gpu_run_models_gpu_models_beta_test_reports"
    folder.mkdir()
    (folder / "summary_short.txt").write_text(
        SUMMARY_HEADER
        + "PASSED tests/models/beta/test_modeling_beta.py::BetaModelTest::test_forward_0_fp32\n"
        + "SKIPPED [1] tests/models/beta/test_modeling_beta.py:10: broken\n"  # the decorator's line
        + "SKIPPED [2] tests/test_modeling_common.py:22: Model does not output attentions\n"
        + "FAILED tests/models/beta/test_modeling_beta.py::BetaModelTest::test_own - AssertionError: a message\n"
        + "that goes on over a second line\n"
    )
    (folder / "stats.txt").write_text("=== 1 failed, 1 passed, 3 skipped in 1.00s ===\n")
    result = scan_repository(repo, cache_dir=tmp_path / "cache", jobs=1, observed=[tmp_path])
    join = result.combined
    found = {key: (pair.status, pair.seen[0].test_class) for key, pair in join.pairs.items()}
    assert found == {
        ("test_forward", "beta"): ("ran", "BetaModelTest"),
        ("test_training", "beta"): ("skipped", "BetaModelTest"),
        ("test_attention_outputs", "beta"): ("skipped", None),  # the analyzer says ran
    }
    disagreement = join.pairs["test_attention_outputs", "beta"]
    assert (disagreement.static, disagreement.source, disagreement.difference) == (
        "ran",
        "disagree",
        "analyzer",
    )
    assert join.pairs["test_attention_outputs", "beta"].seen[0].count == 2
    assert join.warnings == ()


def test_a_failure_of_the_run_itself_decides_nothing(repo, tmp_path):
    offline = (
        "<failure message=\"OSError: We couldn't connect to 'https://huggingface.co' to load the files\"/>"
    )
    join = observe(
        repo,
        tmp_path,
        "junit.xml",
        junit(case("alpha", "test_training[x]", offline), case("beta", "test_forward_0_fp32", offline)),
    )
    skipped, ran = join.pairs["test_training", "alpha"], join.pairs["test_forward", "beta"]
    assert (skipped.static, skipped.status, skipped.source) == ("skipped", "skipped", "static")
    assert (ran.static, ran.status, ran.source) == ("ran", "ran", "both-agree")
    assert (
        skipped.observed_reason
        == "OSError: We couldn't connect to 'https://huggingface.co' to load the files"
    )


def test_a_test_file_the_run_could_not_import_is_warned_about(repo, tmp_path):
    """pytest's junit XML gives a module it could not import as one erroring case named after it."""
    failed_import = '<testcase classname="" name="tests.models.beta.test_modeling_beta"><error message="collection failure"/></testcase>'
    join = observe(repo, tmp_path, "junit.xml", junit(failed_import, case("alpha", "test_forward_0_fp32")))
    assert join.warnings == (
        f"{tmp_path / 'junit.xml'}: 1 model test files could not be collected in this run: their tests are not observed",
    )


def test_a_cut_off_summary_is_warned_about_from_its_stats(repo, tmp_path):
    folder = tmp_path / "reports" / "tests"
    folder.mkdir(parents=True)
    (folder / "summary_short.txt").write_text(
        SUMMARY_HEADER
        + "PASSED tests/models/beta/test_modeling_beta.py::BetaModelTest::test_forward_0_fp32\n"
    )
    (folder / "stats.txt").write_text("=== 5 passed in 1.00s ===\n")
    join = scan_repository(repo, cache_dir=tmp_path / "cache", jobs=1, observed=[folder]).combined
    assert join.warnings == (f"{folder / 'stats.txt'}: says 5 passed, the summary lists 1",)


def test_items_of_another_revision_are_counted_in_a_warning(repo, tmp_path, capsys):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"],
        check=True,
    )
    report = tmp_path / "collated_reports_single-gpu_0123abc.json"
    lines = [
        {
            "status": "passed",
            "test": "tests/models/beta/test_modeling_beta.py::BetaModelTest::test_forward_0_fp32",
            "count": 1,
        },
        {
            "status": "passed",
            "test": "tests/models/gone/test_modeling_gone.py::GoneModelTest::test_forward",
            "count": 1,
        },
        {"status": "skipped", "test": "[3] tests/test_modeling_common.py:2: moved", "count": 3},
    ]
    report.write_text(
        json.dumps(
            {
                "gpu_name": "h100",
                "machine_type": "single-gpu",
                "commit_hash": "0123abc",
                "results": [{"model": "beta", "results": lines}],
            }
        )
    )
    output = tmp_path / "out"
    output.mkdir()
    assert (
        scan_main(["--repo", str(repo), "--output_dir", str(output), "--no_cache", "--observed", str(report)])
        == 0
    )
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    assert warnings == [
        f"warning: {report}: made at commit 0123abc, the checkout is at {head[:10]}",
        f"warning: {report}: 4 of 5 items did not map to this checkout (1 in files the checkout does not have, "
        "3 in skip locations at no test of the checkout); a report of another revision?",
    ]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "run.xml",
            '<?xml version="1.0"?>\n<testsuites>\n<testcase name="x"',
            "run.xml:3: not well-formed XML",
        ),
        ("run.xml", "<coverage/>", "run.xml: not a junit XML report (its root element is <coverage>)"),
        ("run.json", '{\n  "results": [,]\n}', "run.json:2: not valid JSON"),
        ("run.json", '{"tests": {}}', "run.json: not a report this reads"),
        (
            "collated_reports_x.json",
            '{"machine_type": "single-gpu", "results": [{"model": "bert", "results": [{"status": "passed"}]}]}',
            "collated_reports_x.json: results[0].results[0]: missing 'test'",
        ),
        (
            "reports/summary_short.txt",
            SUMMARY_HEADER + "PASSED tests/x.py::T::test_a\nwhat is this\n",
            "summary_short.txt:3: not a line of pytest's short test summary",
        ),
        ("notes.txt", "hello", "notes.txt: not a report this reads"),
    ],
)
def test_a_bad_report_is_one_line_naming_it_and_nothing_is_scanned(
    repo, tmp_path, capsys, name, text, message
):
    path = tmp_path / "given" / name
    path.parent.mkdir(parents=True)
    path.write_text(text)
    output = tmp_path / "out"
    output.mkdir()
    code = scan_main(["--repo", str(repo), "--output_dir", str(output), "--observed", str(path)])
    captured = capsys.readouterr()
    assert code == 2
    (line,) = captured.err.splitlines()
    assert line.startswith("model-debugging scan: error: ") and message in line, line
    assert "Parsing" not in captured.out  # refused before the scan
    assert list(output.iterdir()) == []


def test_a_path_that_is_not_there_is_refused():
    with pytest.raises(ReportError, match="nowhere.xml: no such file or folder"):
        read_reports(["nowhere.xml"])


def test_reports_compare_results_by_the_combined_status():
    """The trend and PR check read result JSON: the combined one keeps their keys' meaning."""
    results = {
        "test_x": {
            "origin": "common",
            "models_ran": ["a"],
            "models_skipped": ["b"],
            "skipped_proportion": 0.5,
            "reasons_skipped": ["b: broken"],
            "models_undecided": ["c", "d"],
            "skips": [{"model": "b", "reason": "broken"}],
            "combined": {
                "models_ran": ["c"],
                "models_inert": ["a"],
                "models_skipped": ["b", "d"],
                "models_undecided": [],
                "models_not_applicable": [],
                "decided_by_observation": ["c", "d"],
                "disagreements": [],
                "reasons_observed": {"d": "no outputs"},
            },
        },
        "test_y": {
            "origin": "common",
            "models_ran": ["a"],
            "models_skipped": [],
            "skipped_proportion": 0.0,
            "reasons_skipped": [],
        },
    }
    frame = scan_results_frame(results)
    assert frame.at["test_y", "models_ran"] == ["a"]
    assert {
        key: frame.at["test_x", key]
        for key in ("models_ran", "models_skipped", "models_inert", "models_undecided")
    } == {
        "models_ran": ["c"],
        "models_skipped": ["b", "d"],
        "models_inert": ["a"],
        "models_undecided": [],
    }
    assert frame.at["test_x", "skipped_proportion"] == 0.5  # the inert pair ran
    assert frame.at["test_x", "reasons_skipped"] == ["b: broken", "d: no outputs"]
    note = frame.attrs["combined"]
    assert (note.tests, note.decided_by_runs, note.disagreements, note.inert) == (1, 2, 0, 1)
    del results["test_x"]["combined"]["models_inert"]
    with pytest.raises(
        ScanResultsError, match="scan.json: test 'test_x': missing key 'combined.models_inert'"
    ):
        scan_results_frame(results, "scan.json")


def test_a_test_class_named_in_lower_case_is_a_class_of_its_junit_case(tmp_path):
    """transformers has ``xLSTMModelTest``: its junit ``classname`` ends in a lower-case class name."""
    files = observed_tree_files()
    gamma = "tests/models/gamma/test_modeling_gamma.py"
    files[gamma] = files[gamma].replace("class GammaModelTest(", "class gLSTMModelTest(")
    root = write_tree(tmp_path / "checkout", files)
    run = run_pytest(root, "tests/models/gamma", f"--junitxml={tmp_path / 'junit.xml'}")
    assert run.returncode == 0, run.stdout
    join = scan_repository(
        root, cache_dir=tmp_path / "cache", jobs=1, observed=[tmp_path / "junit.xml"]
    ).combined
    assert join.warnings == ()
    pair = join.pairs[("test_attentions", "gamma")]
    assert (pair.status, pair.source, pair.seen[0].test_class) == ("ran", "both-agree", "gLSTMModelTest")
