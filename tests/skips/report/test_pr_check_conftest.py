"""The PR check on a change that adds a conftest.py dropping or skipping tests: pytest then collects
or runs fewer tests, the analyzer does not model conftest.py files, so the rows cannot show it. The
check names each such file, with its line, and fails, instead of saying "No new skips"."""

from model_debugging.skips.report.pr_check.command import main

from .git_trees import git, write

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m")
DROPS_BETA = 'collect_ignore = ["test_modeling_beta.py"]  # flaky on CI\n'
SKIPS_ALL = 'import pytest\n\n\ndef pytest_runtest_setup(item):\n    pytest.skip("no GPU today")\n'


def test_a_conftest_that_drops_a_model_test_file_is_named_and_fails_the_check(whole_tree, tmp_path, capsys):
    write(whole_tree, {"tests/models/beta/conftest.py": DROPS_BETA})
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--markdown", str(markdown)]) == 1
    assert (
        "⚠️ The change adds or edits 1 conftest.py file(s) that may skip or drop tests; the check does not run "
        "them, so the rows cannot show which tests they skip: tests/models/beta/conftest.py:1 sets collect_ignore."
    ) in markdown.read_text(encoding="utf-8")
    assert "tests/models/beta/conftest.py:1 sets collect_ignore" in capsys.readouterr().out


def test_the_root_conftest_counts_and_an_untouched_one_does_not(whole_tree, capsys):
    """pytest loads the checkout's root conftest.py too, though it is outside tests/ and src/."""
    write(whole_tree, {"conftest.py": SKIPS_ALL})
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 1
    assert "conftest.py:5 calls pytest.skip." in capsys.readouterr().out
    git(whole_tree, "add", ".")
    git(whole_tree, *COMMIT, "a root conftest.py")
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 0  # the change no longer touches it
    assert "conftest.py" not in capsys.readouterr().out
