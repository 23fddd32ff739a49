"""The trend report and the PR check on the combined status, from real pytest runs of a git checkout.

A change (one commit on the generated checkout of ``tests/support/observed_tree.py``) makes
``test_attentions`` inert for gamma (its class turns the attentions off: the test returns early),
skips ``test_attentions`` for beta, and skips ``test_outputs`` for alpha (a test only a run decides
for most models). pytest runs both revisions (junit XML and our plugin's record); each is scanned with
``--observed`` and ``--inert``, then compared by ``report`` and checked by ``check-skips``.
"""

import json
import subprocess

import pytest

from model_debugging.skips.command import main as scan_main
from model_debugging.skips.report.command import main as report_main
from model_debugging.skips.report.pr_check.command import main as check_main
from tests.skips.conftest import write_tree
from tests.support.observed_tree import observed_tree_files
from tests.support.pytest_runs import run_pytest

CHANGES = {
    "gamma": (
        "    all_model_classes = (GammaModel,)\n",
        "    all_model_classes = (GammaModel,)\n    has_attentions = False\n",
    ),
    "beta": (
        "    all_model_classes = (BetaModel,)\n",
        '    all_model_classes = (BetaModel,)\n\n    @unittest.skip("attention outputs differ")\n'
        "    def test_attentions(self):\n        pass\n",
    ),
    "alpha": (
        "    def test_alpha_only(self):\n",
        '    @unittest.skip("outputs are checked in test_alpha_only")\n'
        "    def test_outputs(self):\n        pass\n\n"
        "    def test_alpha_only(self):\n",
    ),
}


def git(root, *args):
    command = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    subprocess.run(command, check=True, capture_output=True)


def record_run(root, folder):
    """pytest on the checkout as it is: junit XML and the plugin's record (assertions counted) in ``folder``."""
    run = run_pytest(
        root,
        "tests/models",
        f"--junitxml={folder / 'junit.xml'}",
        f"--observed_json={folder / 'record.json'}",
        "-o",
        "enable_assertion_pass_hook=true",
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert run.returncode == 0, run.stdout
    return [str(folder / "junit.xml"), str(folder / "record.json")]


def scan_json(root, output, reports):
    assert (
        scan_main(
            [
                "--repo",
                str(root),
                "--output_dir",
                str(output),
                "--no_cache",
                "--observed",
                *reports,
                "--inert",
            ]
        )
        == 0
    )
    return output / "all_tests_scan_result.json"


@pytest.fixture(scope="module")
def change(tmp_path_factory):
    """The checkout at base (committed on main) and with the change in its working tree; each
    revision's run reports and combined scan result."""
    work = tmp_path_factory.mktemp("change")
    root = write_tree(work / "checkout", observed_tree_files())
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    base_reports = record_run(root, work / "base_run")
    base_scan = scan_json(root, work / "base_scan", base_reports)
    for model, (old, new) in CHANGES.items():
        path = root / "tests" / "models" / model / f"test_modeling_{model}.py"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))
    head_reports = record_run(root, work / "head_run")
    head_scan = scan_json(root, work / "head_scan", head_reports)
    return root, base_reports, base_scan, head_reports, head_scan


def test_the_scan_lists_the_inert_pairs_apart(change):
    _, _, _, _, head_scan = change
    entry = json.loads(head_scan.read_text())["test_attentions"]
    assert entry["combined"]["models_inert"] == ["delta", "gamma"]
    assert entry["combined"]["models_skipped"] == ["beta"]
    assert entry["models_ran"] == ["alpha", "delta", "gamma"]  # the upstream keys keep the verdicts


def test_the_trend_uses_the_combined_status_and_says_so(change, tmp_path, capsys):
    _, _, base_scan, _, head_scan = change
    markdown = tmp_path / "trend.md"
    code = report_main(
        ["--previous", str(base_scan), "--current", str(head_scan), "--markdown", str(markdown)]
    )
    assert code == 0
    text = markdown.read_text()
    assert "Current scan: the combined status of 7 tests" in text
    assert "Previous scan: the combined status of 7 tests" in text
    assert "Newly inert: 1; no longer inert: 0." in text
    newly_inert = text.split("### Newly inert", 1)[1].split("###", 1)[0]
    assert "| test_attentions | gamma | ran |" in newly_inert
    newly_skipped = text.split("### Newly skipped", 1)[1].split("###", 1)[0]
    assert "| test_attentions | beta | ran | attention outputs differ |" in newly_skipped
    assert "| test_outputs | alpha | ran | outputs are checked in test_alpha_only |" in newly_skipped
    # the static result beside the combined one: the report says the runs may explain a change
    static = tmp_path / "static"
    static.mkdir()
    assert scan_main(["--repo", str(change[0]), "--output_dir", str(static), "--no_cache"]) == 0
    capsys.readouterr()
    assert (
        report_main(["--previous", str(static / "all_tests_scan_result.json"), "--current", str(head_scan)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "Previous scan: the analyzer's verdicts (no test runs joined)." in printed
    assert "Only one side joins test runs" in printed


@pytest.mark.parametrize("revision", ["base", "head"])
def test_the_pr_check_flags_a_pair_made_inert_like_a_new_skip(change, revision, capsys):
    """The same rows from a run of either revision: a run cannot see the change, so where the two
    sides' sources decide a pair differently each side's own verdict stands."""
    root, base_reports, _, head_reports, _ = change
    reports = base_reports if revision == "base" else head_reports
    code = check_main(["--repo", str(root), "--base", "main", "--observed", *reports, "--inert"])
    printed = capsys.readouterr().out
    assert code == 1, printed
    assert "States are the combined status: each side's verdicts joined with 2 test-run report(s)" in printed
    rows = [line for line in printed.splitlines() if line.startswith("test_")]
    assert len(rows) == 3, printed
    (inert,) = [row for row in rows if "gamma" in row]
    assert "inert: runs but reaches no assertion" in inert and "⚠️ rarely skipped" in inert
    (skip,) = [row for row in rows if "beta" in row]
    assert "attention outputs differ" in skip and "test_modeling_beta.py:" in skip
    assert "0/4 (0.0%), 1 inert" in skip and "1/4 (25.0%), 2 inert" in skip  # share before, after
    # the runs decided beta and gamma, which the change leaves alone: half the decided models skipped
    # test_outputs before, so alpha's new skip is not a rarely skipped test
    (outputs,) = [row for row in rows if row.startswith("test_outputs")]
    assert "1/2 (50.0%), 2 undecided" in outputs and "2/3 (66.7%), 1 undecided" in outputs
    assert "⚠️" not in outputs


def test_without_the_runs_the_pr_check_cannot_decide_what_only_they_decide(change, capsys):
    root = change[0]
    assert check_main(["--repo", str(root), "--base", "main"]) == 1
    printed = capsys.readouterr().out
    (outputs,) = [line for line in printed.splitlines() if line.startswith("test_outputs")]
    assert "n/a, 4 undecided" in outputs and "⚠️ rarely skipped" in outputs  # no decided model before
    assert "gamma" not in printed  # no inert search, no run: the early return is not seen
    assert "combined status" not in printed
