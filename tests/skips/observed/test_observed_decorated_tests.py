"""A plugin record of a common test whose decorator returns a function of another name.

transformers' ``tests/generation/test_utils.py`` (2026 snapshot) writes ``@is_flaky`` without
parentheses on ``test_prompt_lookup_decoding_matches_greedy_search``: the class attribute is then
``is_flaky``'s inner ``decorator`` function, which pytest collects and runs under the test's name.
The plugin records the function it runs (``decorator``); the junit XML of the same run names the
item. The pair must be joined from both (it was left out of the plugin's record as "other tests").
"""

import json

from model_debugging.skips.command import main as scan_main
from tests.skips.conftest import write_tree
from tests.support.pytest_runs import run_pytest

FILES = {
    "tests/__init__.py": "",
    "tests/models/__init__.py": "",
    "tests/models/alpha/__init__.py": "",
    "tests/test_modeling_common.py": """
        import functools


        def is_flaky(max_attempts=5, description=None):
            def decorator(test_func_ref):
                @functools.wraps(test_func_ref)
                def wrapper(*args, **kwargs):
                    return test_func_ref(*args, **kwargs)

                return wrapper

            return decorator


        class ModelTesterMixin:
            def test_forward(self):
                self.assertTrue(True)

            @is_flaky
            def test_lookup(self):
                self.assertTrue(True)
    """,
    "tests/models/alpha/test_modeling_alpha.py": """
        import unittest

        from ...test_modeling_common import ModelTesterMixin


        class AlphaModelTest(ModelTesterMixin, unittest.TestCase):
            all_model_classes = ()
    """,
}


def test_a_test_run_through_a_decorator_of_another_name_is_joined_from_the_plugin_record(tmp_path, capsys):
    root = write_tree(tmp_path / "checkout", FILES)
    record, junit = tmp_path / "record.json", tmp_path / "junit.xml"
    run = run_pytest(root, "tests/models", f"--observed_json={record}", f"--junitxml={junit}")
    assert "2 passed" in run.stdout, run.stdout
    assert {item["test"] for item in json.loads(record.read_text())["items"]} == {"test_forward", "decorator"}
    for report in (junit, record):
        output = tmp_path / report.stem
        output.mkdir()
        assert (
            scan_main(
                ["--repo", str(root), "--output_dir", str(output), "--no_cache", "--observed", str(report)]
            )
            == 0
        )
        assert f"{report} [" in capsys.readouterr().out
        observed = json.loads((output / "all_tests_observed.json").read_text())
        assert observed["reports"][0]["mapped"] == 2, report
        lookup = next(pair for pair in observed["pairs"] if pair["test"] == "test_lookup")
        assert (lookup["model"], [seen["outcome"] for seen in lookup["seen"]]) == ("alpha", ["passed"])
