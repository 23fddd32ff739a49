import hashlib
import subprocess
import sys
from pathlib import Path

from model_debugging.skips.report.pr_check.command import main

from .conftest import write_model
from .git_trees import git


def repo_state(repo: Path) -> tuple[str, str, str]:
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    return status, index, git(repo, "worktree", "list", "--porcelain")


def test_flags_a_rarely_skipped_test_and_leaves_the_checkout_alone(checkout, tmp_path, capsys):
    # unstaged: bert skips a test nobody skipped; staged: a new model skips a test half the models skip
    write_model(checkout, "bert", {"test_training": "Bert cannot train yet"})
    write_model(checkout, "gemma", {"test_inputs_embeds": "Gemma has no inputs_embeds"})
    git(checkout, "add", "tests/models/gemma")
    before = repo_state(checkout)
    markdown = tmp_path / "out" / "new_skips.md"

    code = main(["--repo", str(checkout), "--base", "main", "--markdown", str(markdown)])

    assert code == 1
    assert repo_state(checkout) == before
    text = markdown.read_text(encoding="utf-8")
    # gemma's skip is no skip of a model that ran the test: the first line says whose it is
    assert (
        "2 new skips of 2 models compared with `main` (2 by test files); 1 of them of gemma, a model the "
        "change adds."
    ) in text
    assert (
        "| test_training | bert | BertModelTest | tests/models/bert/test_modeling_bert.py:11 | Bert cannot train yet "
        "| ran | 0/6 (0.0%) | 1/7 (14.3%) | test files | ⚠️ rarely skipped |"
    ) in text
    assert (
        "| test_inputs_embeds | gemma | GemmaModelTest | tests/models/gemma/test_modeling_gemma.py:11 "
        "| Gemma has no inputs_embeds | new model | 3/6 (50.0%) | 4/7 (57.1%) | test files |  |"
    ) in text
    assert "1 hit a test that fewer than 10% of models skipped before" in text
    assert "rarely skipped" in capsys.readouterr().out


def test_common_skip_passes_and_threshold_is_configurable(checkout, tmp_path):
    write_model(checkout, "bert", {"test_inputs_embeds": "Bert has no inputs_embeds"})
    assert main(["--repo", str(checkout), "--base", "HEAD"]) == 0
    strict = tmp_path / "strict.yaml"
    strict.write_text("pr_check:\n  min_skipped_share: 0.6\n", encoding="utf-8")
    assert main(["--repo", str(checkout), "--base", "HEAD", "--config", str(strict)]) == 1


def test_script_runs_and_reports_no_new_skips(checkout):
    result = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve().parents[3] / "utils" / "check_new_skips.py"),
            "--repo",
            str(checkout),
            "--base",
            "main",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "No new skips compared with `main`." in result.stdout


def test_unknown_base_or_no_repository_is_a_clear_error(checkout, tmp_path, capsys):
    assert main(["--repo", str(checkout), "--base", "no-such-branch"]) == 2
    # the branches it does hold: `git init` names the first one `master` unless told otherwise
    assert "unknown revision 'no-such-branch' (branches here: main)" in capsys.readouterr().err
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["--repo", str(plain), "--base", "main"]) == 2
    assert "not a git repository" in capsys.readouterr().err


def test_a_base_without_tests_is_a_clear_error(tmp_path, capsys):
    repo = tmp_path / "empty"
    repo.mkdir()
    (repo / "README.md").write_text("not transformers")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    assert main(["--repo", str(repo), "--base", "main"]) == 2
    assert capsys.readouterr().err == (
        "model-debugging check-skips: error: not a transformers checkout: file tests/test_modeling_common.py is "
        f"missing (looked for {repo / 'tests' / 'test_modeling_common.py'}); run from the checkout root or pass "
        "--repo PATH\n"
    )


def test_a_folder_inside_the_checkout_is_refused_naming_its_root(checkout, capsys, monkeypatch):
    monkeypatch.chdir(checkout)  # `check-skips --repo tests` run from the checkout's root
    assert main(["--repo", "tests", "--base", "main"]) == 2
    assert capsys.readouterr().err == (
        f"model-debugging check-skips: error: tests is a folder inside the checkout {checkout}: "
        "--repo must be the checkout's root\n"
    )
