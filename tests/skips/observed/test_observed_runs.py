"""Real pytest runs on a generated checkout, joined with its scan: every pair's combined status.

The checkout has three models and common tests that each exercise one part of the join: a skip
decorator that is stale (the test passes when it is ignored) and one that is not, a test only the
run decides (undecided statically), a loop that passes over every class of a model (an inert
pass), an environment guard (a disagreement the machine explains), a ``skipIf`` on the interpreter
version (a disagreement it does not) and a ``parameterized.expand`` test (cases named after it).
Pytest runs it the ways users have reports: junit XML, transformers' ``--make-reports`` folders
(and the CI's collated JSON of one), and our plugin's record; then once with skip decorators ignored.
"""

import json

import pytest

from model_debugging import DEFAULT_SETTINGS, scan_repository
from model_debugging.skips.command import main as scan_main
from model_debugging.skips.inert import find_static_inert
from model_debugging.skips.observed import read_reports, with_observations
from tests.skips.conftest import write_tree
from tests.support.observed_tree import observed_tree_files
from tests.support.pytest_runs import make_reports_files, run_pytest

# (test, model) -> (static verdict, combined status, its source, difference) after the runs; the
# static verdicts with the pairs found inert from the sources (a loop that passes over every class
# of a model, an early return)
EXPECTED = {
    **{("test_forward", model): ("ran", "ran", "both-agree", None) for model in ("beta", "delta")},
    ("test_forward", "alpha"): ("skipped", "skipped", "both-agree", None),
    ("test_forward", "gamma"): ("skipped", "skipped", "both-agree", None),
    **{("test_gradients", model): ("ran", "ran", "both-agree", None) for model in ("alpha", "gamma")},
    **{("test_gradients", model): ("inert", "inert", "both-agree", None) for model in ("beta", "delta")},
    **{
        ("test_attentions", model): ("ran", "ran", "both-agree", None) for model in ("alpha", "beta", "gamma")
    },
    ("test_attentions", "delta"): ("inert", "inert", "both-agree", None),
    ("test_outputs", "alpha"): ("undecided", "ran", "observed", None),
    ("test_outputs", "beta"): ("undecided", "skipped", "observed", None),
    ("test_outputs", "gamma"): ("undecided", "ran", "observed", None),
    # a machine that lacked something decides nothing
    ("test_outputs", "delta"): ("undecided", "undecided", "static", None),
    **{
        ("test_on_gpu", model): ("ran", "ran", "disagree", "environment")
        for model in ("alpha", "beta", "delta", "gamma")
    },
    **{
        ("test_legacy_api", model): ("ran", "ran", "both-agree", None)
        for model in ("alpha", "delta", "gamma")
    },
    ("test_legacy_api", "beta"): ("ran", "skipped", "disagree", "analyzer"),
    **{
        ("test_cases", model): ("ran", "ran", "both-agree", None)
        for model in ("alpha", "beta", "delta", "gamma")
    },
}
CI_FOLDER = "single-gpu_run_models_gpu_models_beta_test_reports"


def collate(folder, machine_type: str, commit: str) -> dict:
    """What transformers' utils/collated_reports.py makes of one model's --make-reports folder."""
    results = []
    for line in (folder / "summary_short.txt").read_text().splitlines()[1:]:
        status = next(
            (word for word in ("PASSED", "FAILED", "SKIPPED", "ERROR") if line.startswith(word)), None
        )
        if status is not None:
            count = int(line.split("[", 1)[1].split("]", 1)[0]) if status == "SKIPPED" else 1
            results.append(
                {"status": status.lower(), "test": line.split(status, maxsplit=1)[1].strip(), "count": count}
            )
    model = folder.name.split("models_")[-1].removesuffix("_test_reports")
    return {
        "gpu_name": "a10",
        "machine_type": machine_type,
        "commit_hash": commit,
        "total_status_count": {},
        "results": [{"model": model, "results": results}],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("observed")
    files = {**observed_tree_files(), **make_reports_files()}
    write_tree(root, files)
    reports = root / "reports"
    run = run_pytest(
        root,
        "tests/models",
        "-rA",
        f"--junitxml={reports / 'junit.xml'}",
        f"--observed_json={reports / 'record.json'}",
        "-o",
        "enable_assertion_pass_hook=true",
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert run.returncode == 0, run.stdout
    per_model = run_pytest(root, "tests/models/beta", f"--make-reports={CI_FOLDER}")
    assert (reports / CI_FOLDER / "summary_short.txt").is_file(), per_model.stdout
    collated = reports / "collated" / "collated_reports_single-gpu_abc1234.json"
    collated.parent.mkdir()
    collated.write_text(json.dumps(collate(reports / CI_FOLDER, "single-gpu", "abc1234")))
    stale = run_pytest(
        root, "tests/models", f"--observed_json={root / 'stale.json'}", "--observed_ignore_skips"
    )
    assert "1 failed" in stale.stdout, stale.stdout
    return root


def test_every_pair_gets_its_combined_status_from_all_the_reports(runs, tmp_path):
    reports = runs / "reports"
    paths = [reports / "junit.xml", reports / "record.json", reports / CI_FOLDER, reports / "collated"]
    scanned = scan_repository(runs, cache_dir=tmp_path / "cache", jobs=1)
    inert = find_static_inert(runs, scanned.tests, cache_dir=tmp_path / "cache", jobs=1)
    assert inert == {"test_gradients": ("beta", "delta"), "test_attentions": ("delta",)}
    result = with_observations(scanned, read_reports(paths), runs, DEFAULT_SETTINGS, inert)
    join = result.combined
    assert [tally.report.kind for tally in join.tallies] == ["junit", "plugin", "make-reports", "collated"]
    found = {
        (test, model): (pair.static, pair.status, pair.source, pair.difference)
        for (test, model), pair in join.pairs.items()
    }
    assert found == EXPECTED
    assert join.undecided == (4, 1)
    assert join.warnings == ()
    entry = result.to_json()["test_outputs"]
    assert entry["models_undecided"] == ["alpha", "beta", "delta", "gamma"]  # the static verdicts stay
    assert entry["combined"]["models_ran"] == ["alpha", "gamma"]
    assert entry["combined"]["decided_by_observation"] == ["alpha", "beta", "gamma"]
    assert result.to_json()["test_gradients"]["combined"]["models_inert"] == ["beta", "delta"]
    assert result.to_json()["test_gradients"]["models_ran"] == ["alpha", "beta", "delta", "gamma"]


def test_the_scan_api_joins_reports_and_the_plugin_alone_finds_the_inert_passes(runs, tmp_path):
    result = scan_repository(
        runs, cache_dir=tmp_path / "cache", jobs=1, observed=[runs / "reports" / "record.json"]
    )
    inert = {
        (test, model)
        for test, entry in result.to_json().items()
        for model in entry["combined"]["models_inert"]
    }
    assert inert == {("test_gradients", "beta"), ("test_gradients", "delta"), ("test_attentions", "delta")}


def test_the_ci_reports_alone_name_pairs_through_the_model_they_cover(runs, tmp_path):
    """Folded skips (``SKIPPED [1] tests/test_modeling_common.py:18: ...``) name no model: the CI's
    per-model folder and collated entry do."""
    reports = runs / "reports"
    for path in (reports / CI_FOLDER, reports / "collated"):
        join = scan_repository(runs, cache_dir=tmp_path / "cache", jobs=1, observed=[path]).combined
        beta = {test: pair.status for (test, model), pair in join.pairs.items() if model == "beta"}
        assert beta == {
            "test_forward": "ran",
            "test_attentions": "ran",
            "test_gradients": "ran",  # the make-reports files count no assertion: not known inert
            "test_outputs": "skipped",
            "test_on_gpu": "ran",
            "test_legacy_api": "skipped",
            "test_cases": "ran",
        }
        assert {model for _, model in join.pairs} == {"beta"}


def scan_command(runs, output, *args: str) -> int:
    """``model-debugging scan`` of the checkout ``runs`` into ``output`` (created)."""
    output.mkdir()
    return scan_main(["--repo", str(runs), "--output_dir", str(output), "--no_cache", *args])


def test_a_disagreement_is_reported_with_both_reasons(runs, tmp_path, capsys):
    output = tmp_path / "out"
    assert scan_command(runs, output, "--observed", str(runs / "reports" / "junit.xml"), "--inert") == 0
    printed = capsys.readouterr().out
    assert "Undecided pairs: 4 -> 1 (3 decided by the runs)" in printed
    assert "Inert pairs (ran without reaching an assertion): 3" in printed  # from the sources alone
    assert (
        "[analyzer] beta / test_legacy_api: static ran "
        '(unittest.skipIf(sys.version_info >= (3, 8), "legacy API removed")), observed skipped (legacy API removed)'
    ) in printed
    saved = json.loads((output / "all_tests_observed.json").read_text())
    (disagreement,) = [pair for pair in saved["disagreements"] if pair["difference"] == "analyzer"]
    assert (
        disagreement["static_reason"] == 'unittest.skipIf(sys.version_info >= (3, 8), "legacy API removed")'
    )
    assert disagreement["observed_reason"] == "legacy API removed"
    assert disagreement["seen"][0]["test_class"] == "BetaModelTest"


def test_a_run_with_skip_decorators_ignored_shows_the_stale_skip(runs, tmp_path, capsys):
    output = tmp_path / "out"
    assert scan_command(runs, output, "--observed", str(runs / "stale.json"), "--stale_skips") == 0
    stale = {entry["reason"]: entry for entry in json.loads((output / "stale_skips.json").read_text())}
    assert set(stale) == {"flaky since the cache refactor", "crashes on empty input"}
    assert stale["flaky since the cache refactor"]["now_passes"] is True
    assert stale["crashes on empty input"]["now_passes"] is False
    assert stale["crashes on empty input"]["rerun"] == [
        {"model": "gamma", "test": "test_forward", "outcome": "failed"}
    ]
    printed = capsys.readouterr().out
    assert "Pass with the skip ignored: 1" in printed
    # the run with skips ignored decides no pair's status
    assert "Undecided pairs: 4 -> 4" in printed


def test_the_printed_rerun_command_runs_the_stale_candidates(runs, tmp_path, capsys):
    output = tmp_path / "out"
    assert scan_command(runs, output, "--stale_skips") == 0
    arguments = (output / "stale_skips_rerun.args").read_text().splitlines()
    assert arguments[:2] == [
        "tests/models/alpha/test_modeling_alpha.py",
        "tests/models/gamma/test_modeling_gamma.py",
    ]
    assert (output / "stale_skips_rerun.select").read_text().splitlines() == [
        "tests/models/alpha/test_modeling_alpha.py::AlphaModelTest::test_forward",
        "tests/models/gamma/test_modeling_gamma.py::GammaModelTest::test_forward",
    ]
    rerun = run_pytest(runs, f"@{output / 'stale_skips_rerun.args'}")
    assert "1 failed" in rerun.stdout, rerun.stdout
    record = json.loads((output / "stale_skips_rerun.json").read_text())
    assert record["ignores_skip_decorators"] is True
    outcomes = {item["nodeid"].split("::", 1)[1]: item["outcome"] for item in record["items"]}
    assert outcomes == {"AlphaModelTest::test_forward": "passed", "GammaModelTest::test_forward": "failed"}
