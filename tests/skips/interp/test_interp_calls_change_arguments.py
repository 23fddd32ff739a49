"""A dict, list or set handed to a call the interpreter does not model may come back changed: a
condition on it afterwards is left to the run (undecided), never decided on the value it had
before. A call the interpreter models (a builtin, a dict's own reading methods) or one handed only
the items (``**options``) changes nothing. A helper the interpreter runs to its end on the one path
it can take hands back what it made of the dict (when its result reads it: else the statements
changing it are not run, and the dict is unknown)."""

import pytest

from tests.skips.conftest import verdicts

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

    def test_dict_a_helper_keeps(self):
        options = {"fast": True}
        self._maybe_slow_down(options, slow=False)
        if options["fast"]:
            self.skipTest("fast")

    def test_dict_a_helper_changes(self):
        options = {"fast": True}
        self._maybe_slow_down(options, slow=True)
        if options["fast"]:
            self.skipTest("fast")

    def _maybe_slow_down(self, options, slow):
        if slow:
            options["fast"] = False
        return options

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


def test_a_helper_run_on_one_path_hands_back_what_it_made(results):
    assert verdicts(results, "test_dict_a_helper_keeps")["skipped"] == ["alpha"]
    assert verdicts(results, "test_dict_a_helper_changes")["ran"] == ["alpha"]
