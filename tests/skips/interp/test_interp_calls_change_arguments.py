"""A dict, list or set handed to a call the interpreter does not model may come back changed: a
condition on it afterwards is left to the run (undecided), never decided on the value it had
before. A call the interpreter models (a builtin, a dict's own reading methods) or one handed only
the items (``**options``) changes nothing."""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_skips import LIBRARY, MODEL_TEST

COMMON = """
import unittest

from somewhere import tune


class ModelTesterMixin:
    def test_dict_handed_to_a_function(self):
        options = {"fast": True}
        tune(options)
        if options["fast"]:
            self.skipTest("fast")

    def test_list_handed_by_keyword(self):
        found = []
        tune(into=found)
        if not found:
            self.skipTest("empty")

    def test_alias_handed_to_a_method(self):
        options = {"fast": True}
        same = options
        self.tune(same)
        if options["fast"]:
            self.skipTest("fast")

    def test_dict_changed_by_a_helper(self):
        options = {"fast": True}
        self._slow_down(options)
        if options["fast"]:
            self.skipTest("fast")

    def _slow_down(self, options):
        options["fast"] = False

    def test_dict_read_by_a_builtin(self):
        options = {"fast": True}
        size = len(options)
        if options["fast"]:
            self.skipTest("fast")

    def test_items_handed_over(self):
        options = {"fast": True}
        tune(**options)
        if options.get("fast"):
            self.skipTest("fast")
"""


@pytest.fixture
def results(make_repo, scan):
    files = {
        "tests/test_modeling_common.py": COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
    }
    return scan(write_tree(make_repo(files), LIBRARY))


@pytest.mark.parametrize(
    "test",
    [
        "test_dict_handed_to_a_function",
        "test_list_handed_by_keyword",
        "test_alias_handed_to_a_method",
        "test_dict_changed_by_a_helper",
    ],
)
def test_a_container_handed_to_a_call_may_have_changed(results, test):
    assert verdicts(results, test) == {"ran": [], "skipped": [], "undecided": ["alpha"]}
    assert any("set by code the analyzer does not follow" in line for line in results[test]["conditions"])


@pytest.mark.parametrize("test", ["test_dict_read_by_a_builtin", "test_items_handed_over"])
def test_a_call_that_cannot_change_the_container_keeps_it(results, test):
    assert verdicts(results, test)["skipped"] == ["alpha"]
