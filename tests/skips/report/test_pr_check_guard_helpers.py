"""The PR check on a change that makes a ``@require_*`` helper stricter.

The analyzer reads ``@require_*`` and ``@slow`` by name only (environment guards, never skips). On a
whole copy of the 2026 snapshot of transformers, turning ``require_accelerate`` in
``src/transformers/testing_utils.py`` into ``unittest.skip(...)`` (every ``test_cpu_offload``,
``test_disk_offload_*`` and ``test_model_parallelism`` of 390 models skipped) printed "No new skips"
and passed. The check now names the helper and the common tests carrying it, and fails.
"""

from model_debugging.skips.report.pr_check.command import main

from .git_trees import edit, git, write

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am")
TESTING_UTILS = '''
import unittest


def require_accelerate(test_case):
    """Skipped when accelerate is not installed."""
    return unittest.skipUnless(is_accelerate_available(), "test requires accelerate")(test_case)
'''
OFFLOAD_TEST = """
    @require_accelerate
    def test_cpu_offload(self):
        run()

    def test_forward(self):"""


def test_a_stricter_require_helper_is_named_with_the_tests_it_guards(whole_tree, tmp_path, capsys):
    write(whole_tree, {"src/transformers/testing_utils.py": TESTING_UTILS})
    edit(whole_tree, "tests/test_modeling_common.py", "\n    def test_forward(self):", OFFLOAD_TEST)
    git(whole_tree, "add", ".")
    git(whole_tree, *COMMIT, "an offload test guarded by require_accelerate")
    helper = "src/transformers/testing_utils.py"
    edit(whole_tree, helper, "Skipped when accelerate is not installed.", "Needs accelerate.")
    assert main(["--repo", str(whole_tree), "--base", "HEAD"]) == 0  # a docstring skips nothing
    assert "environment guard" not in capsys.readouterr().out

    edit(
        whole_tree,
        helper,
        'unittest.skipUnless(is_accelerate_available(), "test requires accelerate")',
        'unittest.skip("accelerate is broken")',
    )
    markdown = tmp_path / "new_skips.md"
    assert main(["--repo", str(whole_tree), "--base", "HEAD", "--markdown", str(markdown)]) == 1
    line = (
        "⚠️ The change edits 1 environment guard(s), which the analyzer reads by name only and never runs, so "
        "no row can show a test they now skip: `require_accelerate` (src/transformers/testing_utils.py:4, on 1 "
        "common test(s): `test_cpu_offload`)."
    )
    assert line in capsys.readouterr().out
    assert line in markdown.read_text(encoding="utf-8")
