"""The PR check compares a branch with where it forked from the base, as a pull request's diff does.

A contributor's branch made from an older ``main`` does not hold what ``main`` changed since: a skip
``main`` removed later is still in the branch, and compared with ``main``'s tip it would show as a new
skip the branch introduced.
"""

import pytest

from model_debugging.skips.report.pr_check.command import main

from .git_trees import edit, git, rows

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am")
ENCODER_SKIP = (
    '    @unittest.skip("the encoder takes no embeddings")\n    def test_inputs_embeds(self):\n        pass\n'
)


@pytest.fixture
def stale_branch(whole_tree):
    """``feature`` forked from ``main``, adds one skip to beta; ``main`` then dropped alpha's encoder skip."""
    git(whole_tree, "checkout", "-q", "-b", "feature")
    edit(
        whole_tree,
        "tests/models/beta/test_modeling_beta.py",
        "all_model_classes = (BetaModel,) if is_torch_available() else ()",
        "all_model_classes = (BetaModel,) if is_torch_available() else ()\n\n"
        '    @unittest.skip("flaky on CI")\n    def test_forward(self):\n        pass',
    )
    git(whole_tree, *COMMIT, "beta skips test_forward")
    git(whole_tree, "checkout", "-q", "main")
    edit(whole_tree, "tests/models/alpha/test_modeling_alpha.py", ENCODER_SKIP, "    pass\n")
    git(whole_tree, *COMMIT, "the encoder takes embeddings now")
    git(whole_tree, "checkout", "-q", "feature")
    return whole_tree


def test_a_branch_made_from_an_older_main_is_compared_with_its_fork_point(stale_branch, capsys):
    assert main(["--repo", str(stale_branch), "--base", "main"]) == 1
    out = capsys.readouterr().out
    fork = git(stale_branch, "merge-base", "main", "HEAD").strip()
    assert f"1 new skip of 1 model compared with `main` at {fork[:12]} (1 by test files)." in out
    assert f"HEAD forked from `main` at {fork[:12]}" in out and "the 1 commit(s) `main` gained since" in out
    # beta's own skip, not alpha's encoder skip that main dropped after the fork
    assert [(row[0], row[1], row[4]) for row in rows(out)] == [("test_forward", "beta", "flaky on CI")]


def test_a_shallow_clone_of_the_pull_requests_merge_commit_needs_no_history(stale_branch, tmp_path, capsys):
    """CI checks out the merge of the branch into the base's tip, one commit deep: the base is its parent."""
    git(stale_branch, "checkout", "-q", "main")
    git(stale_branch, "checkout", "-q", "-b", "merged")
    git(
        stale_branch,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge",
        "feature",
    )
    base = git(stale_branch, "rev-parse", "main").strip()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "merged", f"file://{stale_branch}", str(clone))
    assert main(["--repo", str(clone), "--base", base, "--fetch_base_from", "origin"]) == 1
    out = capsys.readouterr().out
    assert f"1 new skip of 1 model compared with `{base}` (1 by test files)." in out
    assert "forked" not in out and "shallow" not in out
    assert [(row[0], row[1]) for row in rows(out)] == [("test_forward", "beta")]


def test_a_shallow_clone_of_the_branch_says_it_compares_with_the_tip(stale_branch, tmp_path, capsys):
    """Without the history joining them, the fork point is unknown: the rows may hold the base's later
    changes reversed, and the summary says so rather than passing them off as the change's."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{stale_branch}", str(clone))
    assert main(["--repo", str(clone), "--base", "main", "--fetch_base_from", "origin"]) == 1
    out = capsys.readouterr().out
    assert "⚠️ This checkout holds no history joining HEAD to `main` (a shallow clone?)" in out
    assert "fetch-depth: 0" in out
    assert {(row[0], row[1]) for row in rows(out)} == {
        ("test_forward", "beta"),
        ("test_inputs_embeds", "alpha"),
    }
