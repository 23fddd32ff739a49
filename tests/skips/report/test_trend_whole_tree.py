"""The weekly trend between two scans of a whole checkout, as the weekly workflow makes them, and
the share a single-test scan prints.

Each share is the count of skipping models over the decided ones, rounded once for printing. The
result file's `skipped_proportion` is already rounded to 4 digits; a share taken from it and
rounded again is off by 0.1% (4 of 21 models: 19.0%, not 19.1%), and the same test then reads
differently in the PR check. The skips a removed model took with it are counted apart from those
a change made run."""

import shutil

import pytest

from model_debugging.skips.command import main as scan
from model_debugging.skips.report.command import main as report

from .git_trees import MODEL_TEST, git, write

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m")
SKIP_FORWARD = '\n    @unittest.skip("numerically unstable")\n    def test_forward(self):\n        pass\n'


def add_models(repo, names, *, skipping=()):
    """A test folder per model, as a new model's pull request adds it; those in ``skipping`` skip test_forward."""
    for name in names:
        test = MODEL_TEST.format(name=name.capitalize()) + (SKIP_FORWARD if name in skipping else "")
        write(
            repo,
            {f"tests/models/{name}/__init__.py": "", f"tests/models/{name}/test_modeling_{name}.py": test},
        )
    git(repo, "add", ".")
    git(repo, *COMMIT, f"add {', '.join(names)}")


@pytest.fixture
def two_weeks(whole_tree, tmp_path):
    """Last week: 20 models decided for test_forward, 4 skip it; this week a 21st model runs it."""
    names = [f"model{index:02}" for index in range(17)]
    add_models(whole_tree, names, skipping=names[:4])  # with alpha, beta and gamma: 20 models
    assert scan(["--repo", str(whole_tree), "--output_dir", str(tmp_path / "last_week")]) == 0
    add_models(whole_tree, ["model17"])
    assert scan(["--repo", str(whole_tree), "--output_dir", str(tmp_path / "this_week")]) == 0
    return [str(tmp_path / week / "all_tests_scan_result.json") for week in ("last_week", "this_week")]


def test_the_trend_prints_each_share_rounded_once(two_weeks, tmp_path):
    last_week, this_week = two_weeks
    markdown = tmp_path / "trend.md"
    assert report(["--previous", last_week, "--current", this_week, "--markdown", str(markdown)]) == 0
    lines = markdown.read_text(encoding="utf-8").splitlines()
    assert "| test_forward | common | 20.0% | 19.0% | -1.0% | 0 | 0 |" in lines  # share changed
    assert "| test_forward | common | 4/21 | 0 | 19.0% |  |" in lines  # most skipped


def test_a_single_test_scan_prints_the_share_the_trend_prints(two_weeks, whole_tree, tmp_path, capsys):
    capsys.readouterr()
    assert (
        scan(["--repo", str(whole_tree), "--test_method_name", "test_forward", "--output_dir", str(tmp_path)])
        == 0
    )
    assert "Skipped : 4/21 (19.0%)" in capsys.readouterr().out.splitlines()
    assert scan(["--repo", str(whole_tree), "--summary", "--output_dir", str(tmp_path)]) == 0
    summary = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["test_forward", "common", "17", "4", "0", "0", "19.0%"] in summary


def test_the_skips_of_a_removed_model_are_counted_apart(whole_tree, tmp_path, capsys):
    """beta skips test_sdpa and test_inputs_embeds (its model has neither); this week beta is removed."""
    assert scan(["--repo", str(whole_tree), "--output_dir", str(tmp_path / "last_week")]) == 0
    shutil.rmtree(whole_tree / "tests" / "models" / "beta")
    git(whole_tree, "add", "-A")
    git(whole_tree, *COMMIT, "remove beta")
    assert scan(["--repo", str(whole_tree), "--output_dir", str(tmp_path / "this_week")]) == 0
    capsys.readouterr()
    weeks = [str(tmp_path / week / "all_tests_scan_result.json") for week in ("last_week", "this_week")]
    assert report(["--previous", weeks[0], "--current", weeks[1]]) == 0
    out = capsys.readouterr().out
    assert "skips gone: 2 (2 with removed models);" in out
    assert "test_sdpa           beta   BetaModel does not support SDPA         model removed" in out
