"""The pytest plugin that records a run for ``scan --observed``, run by real pytest on small test files.

What users write: ``assert`` statements, ``self.assert*``, numpy's assertion functions reached as
``np.testing.x`` (numpy imports ``numpy.testing`` on first use) or imported by name,
``pytest.raises``; skips by decorator on a test or a class, by ``pytestmark``, by a library's own
``require_*`` helper, by ``skipIf`` and by ``self.skipTest``.
"""

import json

import pytest

from tests.skips.conftest import write_tree
from tests.support.pytest_runs import run_pytest

TESTS = """
import unittest

import numpy as np
import pytest
from numpy.testing import assert_allclose

from helpers import require_nothing_missing, require_something_missing


class CountTest(unittest.TestCase):
    def test_statements(self):
        assert 1 + 1 == 2
        assert "a" in "abc"

    def test_methods(self):
        self.assertEqual(1, 1)
        with self.assertRaises(ValueError):
            int("x")

    def test_numpy(self):
        np.testing.assert_allclose(1.0, 1.0)
        assert_allclose(2.0, 2.0)
        with pytest.raises(KeyError):
            {}["x"]

    def test_returns_early(self):
        for value in ():
            self.assertTrue(value)
        return

    def test_smoke(self):
        int("1")


class SkipTest(unittest.TestCase):
    @unittest.skip("broken since the refactor")
    def test_decorated(self):
        self.assertTrue(True)

    @pytest.mark.skip(reason="marked off")
    def test_marked(self):
        self.assertTrue(True)

    @unittest.skipIf(True, "a condition the run evaluates")
    def test_condition(self):
        self.assertTrue(True)

    @require_something_missing
    def test_library_helper(self):
        self.assertTrue(True)

    @require_nothing_missing
    def test_library_helper_met(self):
        self.assertTrue(True)

    def test_body(self):
        self.skipTest("skipped in the body")


@unittest.skip("the whole class")
class SkippedClassTest(unittest.TestCase):
    def test_in_class(self):
        self.assertTrue(True)


class MarkedClassTest(unittest.TestCase):
    pytestmark = pytest.mark.skip(reason="class mark")

    def test_in_marked_class(self):
        self.assertTrue(True)


class BaseTest(unittest.TestCase):
    def test_inherited(self):
        self.assertTrue(True)


class OverridingTest(BaseTest):
    @unittest.skip("does not apply here")
    def test_inherited(self):
        pass
"""
# a library's helper, as transformers' testing_utils writes them: unittest.skip under its own condition
HELPERS = """
import unittest


def require_something_missing(test_case):
    return unittest.skip(reason="test requires something missing")(test_case)


def require_nothing_missing(test_case):
    return test_case
"""


@pytest.fixture
def tree(tmp_path):
    return write_tree(tmp_path, {"test_things.py": TESTS, "helpers.py": HELPERS})


def record(path) -> dict:
    document = json.loads(path.read_text())
    return {**document, "items": {item["nodeid"].split("::", 1)[1]: item for item in document["items"]}}


def test_a_recorded_run_counts_assertions_and_ignores_skip_decorators_under_xdist(tree):
    run = run_pytest(
        tree,
        "-p",
        "xdist.plugin",
        "-n",
        "2",
        "--observed_json=out/run.json",
        "--observed_ignore_skips",
        "-o",
        "enable_assertion_pass_hook=true",
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    found = record(tree / "out" / "run.json")
    assert found["ignores_skip_decorators"] is True
    assert found["counts_assert_statements"] is True
    items = found["items"]
    counted = {
        name: items[f"CountTest::test_{name}"]["assertions"] for name in ("statements", "methods", "numpy")
    }
    assert counted == {"statements": 2, "methods": 2, "numpy": 3}
    early = items["CountTest::test_returns_early"]
    assert (early["outcome"], early["assertions"], early["checks"]) == ("passed", 0, True)
    smoke = items["CountTest::test_smoke"]
    assert (smoke["assertions"], smoke["checks"]) == (0, False)  # it checks nothing: not inert
    outcomes = {
        name: (item["outcome"], item["skip_ignored"])
        for name, item in items.items()
        if "Skip" in name or "Class" in name
    }
    assert outcomes == {
        "SkipTest::test_decorated": ("passed", "broken since the refactor"),
        "SkipTest::test_marked": ("passed", "marked off"),
        "SkipTest::test_condition": ("skipped", None),
        "SkipTest::test_library_helper": ("skipped", None),
        "SkipTest::test_library_helper_met": ("passed", None),
        "SkipTest::test_body": ("skipped", None),
        "SkippedClassTest::test_in_class": ("passed", "the whole class"),
        "MarkedClassTest::test_in_marked_class": ("passed", "class mark"),
    }
    # a skipped override that does nothing runs what it overrides, as it would without the override
    overriding = items["OverridingTest::test_inherited"]
    assert (overriding["outcome"], overriding["assertions"], overriding["runs_overridden"]) == (
        "passed",
        1,
        True,
    )
    assert overriding["skip_ignored"] == "does not apply here"
    assert items["BaseTest::test_inherited"]["runs_overridden"] is False
    assert items["SkipTest::test_library_helper"]["reason"] == "test requires something missing"


def test_without_the_pass_hook_assertions_are_unknown_and_stale_rewrites_are_named(tree):
    """pytest caches a module's rewritten asserts whatever the hook; a cache written without it
    leaves the run unable to count them: the record says so instead of calling tests inert."""
    bytecode = {"PYTHONDONTWRITEBYTECODE": ""}
    first = run_pytest(tree, "--observed_json=first.json", env=bytecode)
    assert "assert statements not counted (run with -o enable_assertion_pass_hook=true)" in first.stdout
    found = record(tree / "first.json")
    assert found["counts_assert_statements"] is False
    assert {item["assertions"] for item in found["items"].values()} == {None}
    second = run_pytest(
        tree, "--observed_json=second.json", "-o", "enable_assertion_pass_hook=true", env=bytecode
    )
    assert "test_things.py was rewritten by an earlier run without the assertion pass hook" in second.stdout
    assert {item["assertions"] for item in record(tree / "second.json")["items"].values()} == {None}


def test_a_selection_runs_the_tests_it_lists(tree):
    (tree / "selection.txt").write_text(
        "# the tests to run\ntest_things.py::CountTest::test_methods\ntest_things.py::SkipTest::test_marked\n"
    )
    run = run_pytest(tree, "--observed_json=run.json", "--observed_select=selection.txt")
    assert "deselected" in run.stdout, run.stdout
    assert set(record(tree / "run.json")["items"]) == {"CountTest::test_methods", "SkipTest::test_marked"}
    (tree / "selection.txt").write_text("test_things.py::CountTest\n")
    bad = run_pytest(tree, "--observed_json=run.json", "--observed_select=selection.txt")
    assert "selection.txt:1: expected file::Class::test, got 'test_things.py::CountTest'" in bad.stderr


def test_the_installed_plugin_is_loaded_and_ignoring_skips_needs_a_record(tree):
    # loaded from its entry point; -p names the same plugin, not a second one
    run = run_pytest(tree, "-p", "model_debugging.pytest_plugin", "--observed_ignore_skips", autoload=True)
    assert run.returncode == 4  # pytest's usage error
    assert "--observed_ignore_skips needs --observed_json PATH" in run.stderr
