"""Arguments, settings and odd files are checked before any work: one line, exit 2, nothing hangs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from model_debugging.skips.command import main as scan_main
from model_debugging.skips.report.command import main as report_main
from model_debugging.skips.report.pr_check.command import main as check_main

MODEL = """
import unittest
from ...test_modeling_common import ModelTesterMixin

class GoodModelTest(ModelTesterMixin, unittest.TestCase):
    has_attentions = False
"""
SETTINGS = """
common_test_files:
  - path: {common}
    origin: common
models_dir: {models}
test_file_pattern: "{pattern}"
"""


@pytest.fixture
def repo(make_repo):
    return make_repo({"tests/models/good/test_modeling_good.py": MODEL})


def one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    assert "Parsing" not in captured.out  # failed before the scan started
    assert captured.err.count("\n") == 1, captured.err
    return captured.err


def test_jobs_below_one_is_refused(repo, capsys):
    with pytest.raises(SystemExit) as exit_:
        scan_main(["--repo", str(repo), "--jobs", "-3"])
    assert exit_.value.code == 2
    assert "--jobs: must be >= 1, got -3" in one_line_error(capsys)


def test_an_output_dir_that_is_a_file_fails_before_the_scan(repo, tmp_path, capsys):
    existing = tmp_path / "a_file"
    existing.write_text("keep me")
    assert scan_main(["--repo", str(repo), "--output_dir", str(existing)]) == 2
    assert "exists and is not a directory" in one_line_error(capsys)
    assert existing.read_text() == "keep me"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"models": "../../../../etc"}, "key 'models_dir': must stay inside the checkout"),
        ({"common": "/etc/passwd"}, "key 'common_test_files[0].path': must be relative to the checkout"),
        ({"pattern": ""}, "key 'test_file_pattern': must not be empty"),
        # a typo is the config's, not a sign of a wrong checkout
        (
            {"common": "tests/test_modeling_comon.py"},
            "key 'common_test_files[0].path': no file tests/test_mod",
        ),
        ({"models": "test/models"}, "key 'models_dir': no folder test/models in the checkout"),
    ],
)
def test_settings_must_stay_inside_the_checkout_and_match_files(repo, tmp_path, capsys, values, message):
    config = tmp_path / "settings.yaml"
    fields = {"common": "tests/test_modeling_common.py", "models": "tests/models", "pattern": "test_*.py"}
    config.write_text(SETTINGS.format(**{**fields, **values}))
    assert scan_main(["--repo", str(repo), "--config", str(config), "--no_cache"]) == 2
    err = one_line_error(capsys)
    assert str(config) in err and message in err


def test_a_file_pattern_that_matches_no_model_test_file_is_refused(repo, tmp_path, capsys):
    config = tmp_path / "settings.yaml"
    fields = {
        "common": "tests/test_modeling_common.py",
        "models": "tests/models",
        "pattern": "*modelling*.py",
    }
    config.write_text(SETTINGS.format(**fields))
    assert scan_main(["--repo", str(repo), "--config", str(config), "--no_cache"]) == 2
    assert "no file under tests/models matches test_file_pattern '*modelling*.py'" in one_line_error(capsys)


def test_a_pytest_configuration_pytest_cannot_read_is_refused(repo, capsys):
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\npython_files = [unclosed\n")
    assert scan_main(["--repo", str(repo), "--no_cache"]) == 2
    err = one_line_error(capsys)
    assert str(repo / "pyproject.toml") in err and "not valid TOML" in err


def test_a_symlink_out_of_the_checkout_is_refused(repo, tmp_path, capsys):
    outside = tmp_path / "outside"
    (outside / "x").mkdir(parents=True)
    (repo / "tests" / "elsewhere").symlink_to(outside)
    config = tmp_path / "settings.yaml"
    config.write_text(
        SETTINGS.format(common="tests/test_modeling_common.py", models="tests/elsewhere", pattern="t*.py")
    )
    assert scan_main(["--repo", str(repo), "--config", str(config), "--no_cache"]) == 2
    assert "leads outside the checkout" in one_line_error(capsys)


def test_a_long_test_name_is_shortened_in_the_message(repo, capsys):
    assert scan_main(["--repo", str(repo), "--test_method_name", "test_" + "x" * 10_000, "--no_cache"]) == 2
    (error,) = capsys.readouterr().err.splitlines()  # checked before the scan: no line of its phases
    assert len(error) < 400 and "more characters" in error


def test_a_fifo_and_a_device_are_reported_not_read(repo, tmp_path):
    fifo_model = repo / "tests" / "models" / "fifo"
    fifo_model.mkdir()
    os.mkfifo(fifo_model / "test_modeling_fifo.py")
    zero_model = repo / "tests" / "models" / "zero"
    zero_model.mkdir()
    (zero_model / "test_modeling_zero.py").symlink_to("/dev/zero")
    command = [
        sys.executable,
        "-m",
        "model_debugging.cli",
        "scan",
        "--repo",
        str(repo),
        "--output_dir",
        str(tmp_path),
    ]
    result = subprocess.run([*command, "--no_cache"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    errors = {
        error["path"]: error["message"]
        for error in json.loads((tmp_path / "all_tests_scan_errors.json").read_text())
    }
    assert errors == {
        "tests/models/fifo/test_modeling_fifo.py": "cannot read: not a regular file (FIFO)",
        "tests/models/zero/test_modeling_zero.py": "cannot read: not a regular file (device)",
    }
    assert (
        "good"
        in json.loads((tmp_path / "all_tests_scan_result.json").read_text())["test_forward"]["models_ran"]
    )


def test_report_outputs_at_a_directory_fail_before_the_work(tmp_path, capsys):
    current = tmp_path / "scan.json"
    current.write_text(json.dumps({}))
    for option in ("--markdown", "--csv"):
        assert report_main(["--current", str(current), option, str(tmp_path)]) == 2
        err = one_line_error(capsys)
        assert f"{option} {tmp_path} is a directory" in err


def test_a_reason_that_is_not_a_string_names_the_file_and_key(tmp_path, capsys):
    current = tmp_path / "scan.json"
    entry = {"origin": "common", "models_ran": [], "models_skipped": ["a"], "skipped_proportion": 1.0}
    current.write_text(json.dumps({"test_x": {**entry, "reasons_skipped": [5]}}))
    assert report_main(["--current", str(current)]) == 2
    err = one_line_error(capsys)
    assert f"{current}: test 'test_x': key 'reasons_skipped' must list strings, got 5" in err


def test_check_skips_markdown_at_a_directory_fails_before_scanning(tmp_path, capsys):
    assert check_main(["--repo", str(tmp_path), "--base", "main", "--markdown", str(tmp_path)]) == 2
    assert "is a directory" in one_line_error(capsys)
    assert not Path(tmp_path / "base").exists()


def test_a_repo_that_does_not_exist_or_is_a_file_is_named_so(repo, tmp_path, capsys):
    missing = tmp_path / "does-not-exist"
    assert scan_main(["--repo", str(missing), "--output_dir", str(tmp_path / "out")]) == 2
    assert f"the checkout {missing} does not exist" in one_line_error(capsys)
    file = repo / "tests" / "test_modeling_common.py"
    assert scan_main(["--repo", str(file), "--output_dir", str(tmp_path / "out")]) == 2
    assert f"the checkout {file} is not a folder" in one_line_error(capsys)


def test_report_on_a_single_test_result_asks_for_a_full_scan(repo, tmp_path, capsys):
    args = ["--repo", str(repo), "--output_dir", str(tmp_path), "--test_method_name", "test_forward"]
    assert scan_main(args) == 0
    single = tmp_path / "scan_test_forward.json"
    capsys.readouterr()
    assert report_main(["--previous", str(single), "--current", str(single)]) == 2
    assert (
        f"{single}: the result of a single test (scan --test_method_name); "
        "give the all_tests_scan_result.json of a full scan"
    ) in one_line_error(capsys)


@pytest.mark.parametrize("cache", [[], ["--no_cache"]])
def test_an_unknown_test_name_is_the_first_and_only_line(repo, tmp_path, cache):
    """Checked before the scan starts, as a user runs the script: no "Scanning N model test files..."
    (437 on the 2026 snapshot of transformers) ahead of the error, and nothing written."""
    output = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve().parents[2] / "utils" / "scan_skipped_tests.py"),
            "--test_method_name",
            "test_does_not_exist",
            "--output_dir",
            str(output),
            *cache,
        ],
        cwd=repo,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "utils/scan_skipped_tests.py: error: unknown common test 'test_does_not_exist': no test of that "
        "name in tests/test_modeling_common.py, tests/generation/test_utils.py (common_test_files of the settings)\n"
    )
    assert not output.exists()
