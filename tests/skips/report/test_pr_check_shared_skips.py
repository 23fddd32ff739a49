"""The PR check on changes whose rows are not one model's own skip, on a whole checkout in git.

A skip added to a common test (a mixin of tests/test_modeling_common.py) stops every model that
inherits it from running the test: the check flags it, however many models skipped the test before
(on the 2026 snapshot, `@unittest.skip` on `ModelTesterMixin.test_attention_outputs` gave 334 rows,
14.3% -> 80.0% skipped, and passed). A library edit that leaves pairs undecided is told apart from
one that skips them: undecided rows are not counted as new skips.
"""

from model_debugging.skips.report.pr_check.command import main

from .git_trees import edit, markdown_rows, rows

SKIPPED_MIXIN_TEST = (
    "    def test_inputs_embeds(self):",
    '    @unittest.skip("flaky on CI")\n    def test_inputs_embeds(self):',
)


def test_a_skip_added_to_a_common_test_is_flagged_for_every_model_it_reaches(whole_tree, tmp_path, capsys):
    """beta skipped test_inputs_embeds before (its forward takes no inputs_embeds): 1 of 3 models,
    above the 10% under which a skip counts as rare. alpha and gamma now skip it too: 2 new skips, as
    the share's move 1/3 -> 3/3 says, in 3 rows (gamma's class is collected by two files). The first
    line and the flag once counted the rows ("3 new skips", "3 skip a test for many models") beside
    that share."""
    edit(whole_tree, "tests/test_modeling_common.py", *SKIPPED_MIXIN_TEST)
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--markdown", str(markdown)]) == 1
    out = capsys.readouterr().out
    assert "2 new skips of 2 models compared with `HEAD` (2 by test files), in 3 rows." in out
    assert "Skips introduced by this change (3 rows)" in out
    assert (
        "⚠️ 2 skip a test for many models at once (more than 10% of the models stop running it): "
        "`test_inputs_embeds` 1/3 (33.3%) → 3/3 (100.0%). A skip in a shared file"
    ) in out
    where = "tests/test_modeling_common.py:18 | flaky on CI | ran | 1/3 (33.3%) | 3/3 (100.0%) | test files"
    assert markdown_rows(markdown) == [
        f"| test_inputs_embeds | alpha | AlphaModelTest | {where} | ⚠️ many models at once |",
        f"| test_inputs_embeds | gamma | GammaModelTest | {where} | ⚠️ many models at once |",
        f"| test_inputs_embeds | gamma | GammaModelTest | {where} | ⚠️ many models at once |",
    ]  # alpha's encoder class skipped it before; gamma's class of the same name is in two files
    lenient = tmp_path / "lenient.yaml"
    lenient.write_text("pr_check:\n  max_newly_skipped_share: 0.7\n", encoding="utf-8")
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--config", str(lenient)]) == 0
    out = capsys.readouterr().out
    assert len(rows(out)) == 3 and "Each skips a test that at least 10% of models already skipped" in out


def test_a_skip_added_to_one_model_is_not_many_models(whole_tree, capsys):
    edit(
        whole_tree,
        "tests/models/gamma/test_modeling_gamma.py",
        "    all_model_classes",
        '    @unittest.skip("flaky")\n    def test_inputs_embeds(self):\n        pass\n\n    all_model_classes',
    )
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 0  # gamma's second file still runs it
    assert [row[-1] for row in rows(capsys.readouterr().out)] == ["test files"]


def test_pairs_a_library_edit_leaves_undecided_are_not_counted_as_new_skips(whole_tree, capsys):
    """A flag only a run can read: the two pairs are rows (flagged, a library change alone), but no
    skip is claimed."""
    edit(
        whole_tree,
        "src/transformers/models/alpha/modeling_alpha.py",
        "    _supports_sdpa = True\n",
        "    _supports_sdpa = os.environ.get('SDPA')\n",
    )
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert (
        "No new skips compared with `HEAD`; 2 pairs are now undecided (2 by library): the "
        "analyzer cannot tell without a run whether they skip"
    ) in out
    assert "2 new skips" not in out and "Each skips a test" not in out
    assert [(row[0], row[1], row[-1]) for row in rows(out)] == [
        ("test_sdpa", "alpha", "⚠️ library change"),
        ("test_sdpa", "gamma", "⚠️ library change"),
    ]
