"""A checkout of tests/ only (no library sources), scanned by the command a user runs: it still
works, says once on stderr that library-dependent conditions are undecided, and the weekly
workflow checks out the library sources so that its report does not end up that way."""

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.skips.models.test_runtime_skips import COMMON, LIBRARY, MODEL_TEST

PROJECT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT / "utils" / "scan_skipped_tests.py"
FILES = {
    "tests/test_modeling_common.py": COMMON,
    "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
    "tests/models/beta/test_modeling_beta.py": MODEL_TEST.format(name="Beta", bos=None),
}


def _scan(repo: Path, out: Path) -> tuple[subprocess.CompletedProcess, dict]:
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--repo",
            str(repo),
            "--output_dir",
            str(out),
            "--no_cache",
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done, json.loads((out / "all_tests_scan_result.json").read_text())


def test_tests_only_checkout_scans_and_says_once_what_is_undecided(make_repo, tmp_path):
    done, result = _scan(make_repo(FILES), tmp_path / "out")
    assert done.stderr.count("note: no library sources") == 1
    sdpa = result["test_sdpa"]
    assert (sdpa["models_ran"], sdpa["models_skipped"], sdpa["models_undecided"]) == (
        [],
        [],
        ["alpha", "beta"],
    )
    assert sdpa["skipped_proportion"] == 0.0  # skipped / (ran + skipped): undecided pairs are in neither


def test_with_the_library_sources_the_same_tests_are_decided_and_nothing_is_said(make_repo, tmp_path):
    from tests.skips.conftest import write_tree

    repo = write_tree(make_repo(FILES), LIBRARY)
    done, result = _scan(repo, tmp_path / "out")
    assert "no library sources" not in done.stderr
    sdpa = result["test_sdpa"]
    assert (sdpa["models_ran"], sdpa["models_skipped"], sdpa["models_undecided"]) == (["alpha"], ["beta"], [])
    assert sdpa["skipped_proportion"] == 0.5


def test_the_weekly_report_checks_out_the_library_sources_beside_the_tests():
    workflow = yaml.safe_load((PROJECT / ".github" / "workflows" / "skip-report.yml").read_text())
    checkouts = [
        step["with"] for step in workflow["jobs"]["report"]["steps"] if "checkout" in step.get("uses", "")
    ]
    transformers = next(
        options for options in checkouts if options.get("repository") == "huggingface/transformers"
    )
    assert set(transformers["sparse-checkout"].split()) >= {"tests", "src"}
