"""What a reviewer reads of a change that skips a common test for every model and un-skips another.

On the 2026 snapshot of transformers, ``@unittest.skip`` on ``ModelTesterMixin.test_attention_outputs``
gave 334 rows, of which the table showed 100 (truncated); the un-skip of t5's
``test_model_base_model_prefix`` in the same change was not mentioned at all. Now the skip is one
line whose models follow in a collapsed list, and the removed skip has a line and a section.
"""

from model_debugging.skips.report.pr_check.command import main

from .conftest import write_model
from .git_trees import edit, markdown_rows, rows

SKIPPED_TRAINING = (
    "    def test_training(self):",
    '    @unittest.skip("flaky on CI")\n    def test_training(self):',
)


def test_a_common_test_skipped_for_every_model_is_one_line(checkout, tmp_path, capsys):
    edit(checkout, "tests/test_modeling_common.py", *SKIPPED_TRAINING)
    (checkout / "tests" / "test_modeling_common.py").write_text(
        "import unittest\n" + (checkout / "tests" / "test_modeling_common.py").read_text(encoding="utf-8")
    )
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(checkout), "--base", "main", "--markdown", str(markdown)]) == 1
    out = capsys.readouterr().out
    assert "6 new skips of 6 models compared with `main` (6 by test files), in 1 row." in out
    assert markdown_rows(markdown) == [
        "| test_training | 6 models | 6 classes | tests/test_modeling_common.py:11 | flaky on CI | ran "
        "| 0/6 (0.0%) | 6/6 (100.0%) | test files | ⚠️ many models at once |"
    ]
    text = markdown.read_text(encoding="utf-8")
    assert (
        "<details><summary>The 6 models for which test_training is newly skipped "
        "(tests/test_modeling_common.py:11: flaky on CI)</summary>\n\n"
        "bert (BertModelTest), gpt2 (Gpt2ModelTest), llama (LlamaModelTest), opt (OptModelTest), "
        "t5 (T5ModelTest), vit (VitModelTest)\n\n</details>"
    ) in text
    assert "… and" not in text and "Skips removed" not in text  # nothing cut; nothing un-skipped
    assert [row[:3] for row in rows(out)] == [["test_training", "6 models", "6 classes"]]
    assert "bert (BertModelTest), gpt2 (Gpt2ModelTest)" in out  # the terminal lists them too


def test_a_removed_skip_is_said_and_listed(checkout, tmp_path, capsys):
    """llama, opt and t5 skipped test_inputs_embeds; the change un-skips llama's."""
    write_model(checkout, "llama", {})
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(checkout), "--base", "main", "--markdown", str(markdown)]) == 0
    text = markdown.read_text(encoding="utf-8")
    assert "No new skips compared with `main`." in text
    assert (
        "The change removes 1 skip of 1 model, in 1 test(s) (`test_inputs_embeds`): listed under 'Skips removed by "
        "this change', with what each pair does now."
    ) in text
    assert "### Skips removed by this change (1 row)" in text
    assert markdown_rows(markdown) == [
        "| test_inputs_embeds | llama | LlamaModelTest | tests/models/llama/test_modeling_llama.py:11 "
        "| llama has no inputs_embeds | runs |"
    ]
    assert "Skips removed by this change (1 row)" in capsys.readouterr().out


def test_a_skip_worded_per_model_is_one_line_with_each_wording_listed(checkout, tmp_path, capsys):
    """One skip call whose reason names the test class ("BertModelTest trains too slowly", ...) is one
    place: its rows are one line, and the list under the table gives each model's wording."""
    edit(
        checkout,
        "tests/test_modeling_common.py",
        "    def test_training(self):\n",
        '    def test_training(self):\n        self.skipTest(f"{type(self).__name__} trains too slowly")\n',
    )
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(checkout), "--base", "main", "--markdown", str(markdown)]) == 1
    assert [row[:5] for row in _cells(markdown)] == [
        ["test_training", "6 models", "6 classes", "tests/test_modeling_common.py:9",
         "BertModelTest trains too slowly (worded per model: see the list)"],
    ]  # fmt: skip
    text = markdown.read_text(encoding="utf-8")
    assert (
        "bert (BertModelTest): BertModelTest trains too slowly, gpt2 (Gpt2ModelTest): Gpt2ModelTest trains"
        in text
    )


def _cells(markdown):
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in markdown_rows(markdown)]
