"""The PR check on a whole checkout in one git repository (tests/, src/, utils/), as transformers is.

The base revision is scanned with the library, as the working tree is: an unchanged tree has no
new skip. A skip added to one class of a model with two classes is listed with its class, file and
line; a library edit that flips a run-time skip is listed with the library file that caused it.
"""

import re

from model_debugging.skips.report.pr_check.command import main

from .git_trees import edit, git, markdown_rows, rows


def test_an_unchanged_whole_tree_has_no_new_skip(whole_tree, capsys):
    """Not even alpha's encoder class, which skips a test alpha's other class runs, nor gamma's
    second GammaModelTest, which does the same from another file."""
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "No new skips compared with `HEAD`." in out
    assert rows(out) == []


def test_a_skip_in_one_class_of_a_model_is_listed_with_its_class_file_and_line(whole_tree, tmp_path, capsys):
    edit(
        whole_tree,
        "tests/models/alpha/test_modeling_alpha.py",
        "    def test_forward(self):\n        check_outputs(self)",
        '    def test_forward(self):\n        self.skipTest(reason="flaky on CI")\n        check_outputs(self)',
    )
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--markdown", str(markdown)]) == 1
    assert (
        "| test_forward | alpha | AlphaModelTest | tests/models/alpha/test_modeling_alpha.py:15 | flaky on CI "
        "| ran | 0/3 (0.0%) | 0/3 (0.0%) | test files | ⚠️ rarely skipped |"
    ) in markdown.read_text(encoding="utf-8")  # alpha still runs the test in AlphaEncoderModelTest
    assert len(rows(capsys.readouterr().out)) == 1


def test_a_library_edit_that_flips_a_run_time_skip_names_the_library_file(whole_tree, tmp_path, capsys):
    edit(whole_tree, "src/transformers/models/alpha/modeling_alpha.py", "    _supports_sdpa = True\n", "")
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 1
    found = rows(capsys.readouterr().out)
    cause = "library: src/transformers/models/alpha/modeling_alpha.py"
    assert [(row[0], row[1], row[2], row[-2], row[-1]) for row in found] == [
        ("test_sdpa", "alpha", "AlphaEncoderModelTest", cause, "⚠️ library change"),
        ("test_sdpa", "alpha", "AlphaModelTest", cause, "⚠️ library change"),
        ("test_sdpa", "gamma", "GammaModelTest", cause, "⚠️ library change"),  # built on alpha's classes
        ("test_sdpa", "gamma", "GammaModelTest", cause, "⚠️ library change"),  # and in its second file
    ]
    listed_only = tmp_path / "listed.yaml"
    listed_only.write_text("pr_check:\n  flag_library_skips: false\n", encoding="utf-8")
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--config", str(listed_only)]) == 0
    assert len(rows(capsys.readouterr().out)) == 4


def test_a_test_and_a_library_change_together_each_explain_their_own_skips(whole_tree, capsys):
    edit(whole_tree, "src/transformers/models/alpha/modeling_alpha.py", "    _supports_sdpa = True\n", "")
    edit(
        whole_tree,
        "tests/models/beta/test_modeling_beta.py",
        "    all_model_classes",
        '    @unittest.skip("not yet")\n    def test_forward(self):\n        pass\n\n    all_model_classes',
    )
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 1
    causes = {(row[0], row[1]): row[-2] for row in rows(capsys.readouterr().out)}
    assert causes[("test_forward", "beta")] == "test files"
    assert causes[("test_sdpa", "gamma")] == "library: src/transformers/models/alpha/modeling_alpha.py"


def test_harmless_refactors_give_no_rows(whole_tree, capsys):
    alpha = "tests/models/alpha/test_modeling_alpha.py"
    edit(whole_tree, alpha, "def check_outputs(test):", "def verify_outputs(test):")  # a renamed helper
    edit(whole_tree, alpha, "        check_outputs(self)", "        verify_outputs(self)")
    text = (whole_tree / alpha).read_text(encoding="utf-8")  # a moved class: the encoder test first
    head, model_test, encoder_test = re.split(r"\n\n\n(?=class )", text)
    (whole_tree / alpha).write_text(
        f"{head}\n\n\n{encoder_test.rstrip()}\n\n\n{model_test}", encoding="utf-8"
    )
    edit(  # a reformatted file
        whole_tree,
        "tests/models/beta/test_modeling_beta.py",
        "    all_model_classes = (BetaModel,) if is_torch_available() else ()",
        "    # the classes under test\n    all_model_classes = (\n        (BetaModel,)\n        if is_torch_available()\n"
        "        else ()\n    )",
    )
    edit(
        whole_tree,
        "src/transformers/models/alpha/modeling_alpha.py",
        "        pass",
        "        return None",
    )
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 0
    assert rows(capsys.readouterr().out) == []


def test_a_shallow_checkout_fetches_the_base_commit_alone(whole_tree, tmp_path, capsys):
    edit(whole_tree, "README.md", "transformers", "transformers, again")  # the base has a parent
    git(whole_tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "readme")
    base = git(whole_tree, "rev-parse", "HEAD").strip()
    edit(whole_tree, "utils/check_repo.py", "checked", "checked again")  # a commit the check does not read
    git(whole_tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "utils")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{whole_tree}", str(clone))
    assert main(["--repo", str(clone), "--base", base]) == 2
    assert "--fetch_base_from origin" in capsys.readouterr().err
    assert main(["--repo", str(clone), "--base", base, "--fetch_base_from", "origin"]) == 0
    assert "No new skips" in capsys.readouterr().out
    assert git(clone, "rev-list", "--count", base).strip() == "1"  # the base commit, not its history


def test_a_base_that_cannot_be_fetched_is_a_one_line_error(whole_tree, capsys):
    assert main(["--repo", str(whole_tree), "--base", "f" * 40, "--fetch_base_from", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "git fetch" in err and "nowhere" in err


def test_a_test_file_the_change_breaks_is_named_with_its_line(whole_tree, tmp_path, capsys):
    """A skip pasted at the wrong place (between two classes, indented) breaks the file: pytest
    collects none of its tests, and the check says so rather than blaming the test classes."""
    edit(
        whole_tree,
        "tests/models/beta/test_modeling_beta.py",
        "class BetaModelTest",
        '@unittest.skip("flaky")\n    def test_forward(self):\n        pass\n\n\nclass BetaModelTest',
    )
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--markdown", str(markdown)]) == 1
    out = capsys.readouterr().out
    assert (
        "⚠️ 1 scanned file(s) no longer parse, so pytest collects none of their tests: "
        "tests/models/beta/test_modeling_beta.py, line 9: syntax error: unexpected indent."
    ) in out
    # the row is no skip: the summary neither counts it as one nor vouches for its share
    assert "No new skips compared with `HEAD`." in out and "Each skips a test" not in out
    assert "1 pair(s) are tests pytest no longer collects, because a scanned file no longer parses" in out
    listed = markdown_rows(markdown)
    assert len(listed) == 1, listed  # beta skipped its other two common tests before
    assert listed[0].startswith(
        "| test_forward | beta |  | tests/models/beta/test_modeling_beta.py:9 | no longer collected: the test "
        "file does not parse (syntax error: unexpected indent) | ran |"
    )


def test_a_shared_file_the_change_breaks_is_named_for_every_file_that_imports_it(whole_tree, capsys):
    """The common test file broken: pytest cannot import any model test file (each imports it), so it
    collects none of their tests. The check names the broken file once, with the files that import it,
    says which common tests are gone, and fails, rather than passing with no new skip."""
    edit(
        whole_tree,
        "tests/test_modeling_common.py",
        "    def test_sdpa(self):",
        '    @unittest.skip("flaky")\n  def test_sdpa(self):',
    )
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert (
        "⚠️ 1 scanned file(s) no longer parse, so pytest collects none of their tests: "
        "tests/test_modeling_common.py, line 13: syntax error: unindent does not match any outer indentation level."
    ) in out
    assert (
        "⚠️ pytest can no longer import 4 scanned file(s), so it collects none of their tests: 4 import "
        "tests/test_modeling_common.py, directly or not, whose import fails at line 13 (syntax error: unindent "
        "does not match any outer indentation level): tests/models/alpha/test_modeling_alpha.py, line 5; "
        "tests/models/beta/test_modeling_beta.py, line 5; tests/models/gamma/test_modeling_gamma.py, line 5; "
        "tests/models/gamma/test_modeling_gamma_backbone.py, line 5."
    ) in out
    assert (
        "3 common test(s) of `HEAD` are no longer defined, so no model runs them: "
        "test_forward; test_sdpa; test_inputs_embeds."
    ) in out


def test_a_model_file_another_imports_breaks_the_rows_of_both(whole_tree, tmp_path, capsys):
    """beta's test file imports alpha's: alpha's broken, pytest collects neither, and beta's rows name
    alpha's file as the cause, not beta's classes."""
    edit(
        whole_tree,
        "tests/models/beta/test_modeling_beta.py",
        "from ...test_modeling_common import ModelTesterMixin",
        "from ...test_modeling_common import ModelTesterMixin\nfrom ..alpha.test_modeling_alpha import check_outputs",
    )
    git(whole_tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "beta uses alpha")
    edit(
        whole_tree,
        "tests/models/alpha/test_modeling_alpha.py",
        "def check_outputs(test):",
        "def check_outputs(test)",
    )
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--markdown", str(markdown)]) == 1
    listed = markdown_rows(markdown)
    assert [row.split(" | ")[:5] for row in listed if "| beta |" in row] == [
        [
            "| test_forward",
            "beta",
            "",
            "tests/models/beta/test_modeling_beta.py:6",
            "no longer collected: a file it imports does not parse (tests/models/alpha/test_modeling_alpha.py, line 8)",
        ]
    ], listed
    assert not [row for row in listed if "shadows, deletes or stops collecting" in row], listed
    # not a skip to ponder: the summary names the broken file, and the check fails on it
    assert not [row for row in listed if "rarely skipped" in row], listed
    assert "ponder" not in capsys.readouterr().out


def test_head_is_scanned_by_evaluating_again_only_the_model_whose_test_file_changed(whole_tree, capsys):
    """A pull request that adds a skip to beta's test file: the head side starts from base's scan and
    evaluates beta alone (no other model's test files import beta's)."""
    edit(
        whole_tree,
        "tests/models/beta/test_modeling_beta.py",
        "    all_model_classes",
        '    @unittest.skip("not yet")\n    def test_forward(self):\n        pass\n\n    all_model_classes',
    )
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 1
    captured = capsys.readouterr()
    assert [row[:2] for row in rows(captured.out)] == [["test_forward", "beta"]]
    head = captured.err.split("head (working tree):")[1]
    assert "evaluating the 1 model(s) the change concerns: 1 model" in head, captured.err


def test_a_repository_that_is_no_checkout_is_named_as_given_before_any_scan(whole_tree, capsys):
    """Run on another git repository (this project's own clone, say), the check exported and scanned
    the base first, then named the temporary folder it was exported to ("looked for
    /tmp/check_new_skips.ks__elg9/base/tests/test_modeling_common.py"). It now names the folder given."""
    common = whole_tree / "tests" / "test_modeling_common.py"
    common.unlink()
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "base " not in err, err
    assert (
        f"not a transformers checkout: file tests/test_modeling_common.py is missing (looked for {common})"
        in err
    )
    # a base revision without it: named by its commit, not by the folder it is exported to
    git(whole_tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "no common tests")
    base = git(whole_tree, "rev-parse", "HEAD").strip()
    git(whole_tree, "checkout", "-q", "HEAD~1", "--", "tests/test_modeling_common.py")
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (
        f"model-debugging check-skips: error: the base revision {base[:12]} is not a transformers checkout: "
        "it has no file tests/test_modeling_common.py"
    )
