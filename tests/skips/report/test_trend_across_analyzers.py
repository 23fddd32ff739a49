"""The weekly trend when this project was upgraded between two runs, step by step as the weekly
workflow runs it (.github/workflows/skip-report.yml): last week's result made by an older analyzer
(a copy of this project whose no-op rule did not see a `pass` override as a skip), this week's by
this one, last week's commit scanned again by this one, and the trend between them."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from model_debugging.skips.report.analyzers import commit_to_rescan
from model_debugging.skips.report.command import main as report
from model_debugging.skips.report.scan_results import load_provenance

from .git_trees import MODEL_TEST, git, write

ROOT = Path(__file__).resolve().parents[3]
COMMIT = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m")
NOOP_RULE = "model_debugging/skips/parse/rules/noop_override.py"
ACCEPTS_PASS = "        if isinstance(small, cst.Pass):\n            continue\n"


@pytest.fixture
def older_project(tmp_path) -> Path:
    """A copy of this project (the package and the scan script) whose analyzer misses `pass` overrides."""
    old = tmp_path / "older-model-debugging"
    shutil.copytree(
        ROOT / "model_debugging", old / "model_debugging", ignore=shutil.ignore_patterns("__pycache__")
    )
    (old / "utils").mkdir()
    shutil.copy(ROOT / "utils" / "scan_skipped_tests.py", old / "utils")
    rule = old / NOOP_RULE
    text = rule.read_text(encoding="utf-8")
    assert ACCEPTS_PASS in text
    rule.write_text(
        text.replace(ACCEPTS_PASS, ACCEPTS_PASS.replace("continue", "return False")), encoding="utf-8"
    )
    return old


def scan(project: Path, repo: Path, output: Path) -> str:
    """Scan ``repo`` with the scan script of ``project``, as the workflow's step does; the result's path."""
    command = [sys.executable, str(project / "utils" / "scan_skipped_tests.py"), "--repo", str(repo)]
    result = subprocess.run([*command, "--output_dir", str(output)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return str(output / "all_tests_scan_result.json")


def model(name: str, method: str) -> dict[str, str]:
    return {
        f"tests/models/{name}/__init__.py": "",
        f"tests/models/{name}/test_modeling_{name}.py": MODEL_TEST.format(name=name.capitalize()) + method,
    }


@pytest.fixture
def two_weeks(whole_tree, older_project, tmp_path):
    """Last week's result (older analyzer), this week's (this analyzer), last week's commit rescanned."""
    # delta opts out of test_forward with a no-op override: a skip the older analyzer did not see
    write(whole_tree, model("delta", "\n    def test_forward(self):\n        pass  # delta has no forward\n"))
    git(whole_tree, "add", ".")
    git(whole_tree, *COMMIT, "add delta")
    last_week = scan(older_project, whole_tree, tmp_path / "last_week")
    # this week the tree adds epsilon, which skips test_forward
    write(
        whole_tree,
        model(
            "epsilon", '\n    @unittest.skip("frozen backbone")\n    def test_forward(self):\n        pass\n'
        ),
    )
    git(whole_tree, "add", ".")
    git(whole_tree, *COMMIT, "add epsilon")
    this_week = scan(ROOT, whole_tree, tmp_path / "this_week")
    # the workflow's decision, its checkout of that commit alone, and the rescan
    commit, _ = commit_to_rescan(load_provenance(last_week), load_provenance(this_week))
    assert commit == git(whole_tree, "rev-parse", "HEAD~1").strip()
    previous_tree = tmp_path / "previous-transformers"
    git(whole_tree, "worktree", "add", "-q", "--detach", str(previous_tree), commit)
    rescanned = scan(ROOT, previous_tree, tmp_path / "previous-rescan")
    return last_week, this_week, rescanned


def section(markdown: str, title: str) -> str:
    """The table under the markdown heading that starts with ``title``."""
    start = markdown.index(f"### {title} (")
    return markdown[start : markdown.index("###", start + 4)]


def test_the_trend_names_the_tree_s_skips_and_the_analyzer_s_apart(two_weeks, tmp_path):
    last_week, this_week, rescanned = two_weeks
    out = tmp_path / "trend.md"
    arguments = ["--previous", last_week, "--current", this_week, "--previous_rescanned", rescanned]
    assert report([*arguments, "--markdown", str(out)]) == 0
    markdown = out.read_text(encoding="utf-8")
    assert markdown.splitlines()[2].startswith(
        "⚠️ The analyzer changed between the two scans: previous model-debugging"
    )
    tree = section(markdown, "Newly skipped")
    assert "| test_forward | epsilon | new model | frozen backbone |" in tree and "delta" not in tree
    moved = section(markdown, "Analyzer change: Newly skipped")
    assert "| test_forward | delta | ran | delta has no forward |" in moved and "epsilon" not in moved


def test_without_the_rescan_the_trend_warns_that_it_cannot_tell_them_apart(two_weeks, tmp_path):
    last_week, this_week, _ = two_weeks
    out = tmp_path / "trend.md"
    assert report(["--previous", last_week, "--current", this_week, "--markdown", str(out)]) == 0
    markdown = out.read_text(encoding="utf-8")
    assert "mix the tree's with the analyzer's" in markdown.splitlines()[3]
    mixed = section(markdown, "Newly skipped (tree or analyzer)")
    assert "| test_forward | delta |" in mixed and "| test_forward | epsilon |" in mixed
    assert "### Newly skipped (2)" not in markdown
