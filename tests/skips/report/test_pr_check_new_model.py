"""The PR check on a pull request that adds a model: its pairs are listed as an existing model's would be.

A model the change adds did not run anything before; a test it leaves undecided (the analyzer
cannot tell whether it runs) is as much a row as one an existing model stops running.
"""

from model_debugging.skips.report.pr_check.command import main

from .git_trees import MODEL_TEST, markdown_rows, write


def test_a_new_models_skips_and_undecided_tests_are_rows(whole_tree, tmp_path):
    # delta's test class lists a model class the library does not define: what it supports is unknown
    write(
        whole_tree,
        {
            "tests/models/delta/__init__.py": "",
            "tests/models/delta/test_modeling_delta.py": MODEL_TEST.format(name="Delta")
            + '\n    @unittest.skip("no forward yet")\n    def test_forward(self):\n        pass\n',
        },
    )
    markdown = tmp_path / "new_skips.md"
    # no model skipped test_forward before: flagged
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--markdown", str(markdown)]) == 1
    cells = [row.strip("| ").split(" | ") for row in markdown_rows(markdown)]
    assert {(row[0], row[1], row[4].split(":")[0], row[5]) for row in cells} == {
        ("test_forward", "delta", "no forward yet", "new model"),
        ("test_inputs_embeds", "delta", "undecided", "new model"),
        ("test_sdpa", "delta", "undecided", "new model"),
    }
