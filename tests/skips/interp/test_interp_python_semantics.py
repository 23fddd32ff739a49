"""The interpreter computes as Python does, or leaves the value to the run: ``in`` and ``==`` on
containers holding a value only the run knows, ``*items`` in a display and ``*rest`` in a target,
arithmetic on known numbers, loops over ``range``."""

import pytest

from tests.skips.conftest import verdicts

COMMON = """
import unittest


class ModelTesterMixin:
    def test_unpacked_display(self):
        items = (*[1, 2], 3)
        if len(items) == 3 and items[2] == 3:
            self.skipTest("three items")

    def test_in_unknown_item(self):
        if 1 not in [undefined_helper(), 2]:
            self.skipTest("perhaps")

    def test_equal_unknown_item(self):
        if (undefined_helper(), 1) != (5, 1):
            self.skipTest("perhaps")

    def test_arithmetic(self):
        if 3 * 4 // 2 == 6:
            self.skipTest("six")

    def test_starred_target(self):
        rest = [9]
        first, *rest = (1, 2)
        if rest == [2]:
            self.skipTest("the rest")

    def test_augmented_assignment(self):
        count, label, layers = 1, "a", [1]
        count += 2
        label += "b"
        layers += (2,)
        if count == 3 and label == "ab" and layers == [1, 2]:
            self.skipTest("three")

    def test_list_extended_in_place(self):
        first = [1]
        same = first
        first += [2]
        if len(same) == 1:
            self.skipTest("never: the list both names hold has two items")

    def test_range_loop(self):
        found = None
        for index in range(2, 5):
            found = index
        if found == 4 and 3 in range(5) and len(range(0, 10, 5)) == 2:
            self.skipTest("four")

    def test_unknown_range_loop(self):
        found = None
        for index in range(undefined_helper()):
            found = index
        if found is None:
            self.skipTest("perhaps")

    def test_starred_comprehension_target(self):
        heads = [head for head, *_ in [(1, 2, 3), (4,)]]
        if heads == [1, 4]:
            self.skipTest("heads")
"""


@pytest.mark.parametrize(
    "test",
    [
        "test_unpacked_display",
        "test_arithmetic",
        "test_starred_target",
        "test_starred_comprehension_target",
        "test_range_loop",
        "test_augmented_assignment",
    ],
)
def test_what_python_decides_is_decided(results, test):
    assert verdicts(results, test) == {"ran": [], "skipped": ["alpha"], "undecided": []}


@pytest.mark.parametrize(
    "test", ["test_in_unknown_item", "test_equal_unknown_item", "test_unknown_range_loop"]
)
def test_a_value_only_the_run_knows_leaves_the_comparison_to_the_run(results, test):
    """An item only the run knows may be equal to the other side."""
    assert verdicts(results, test) == {"ran": [], "skipped": [], "undecided": ["alpha"]}


def test_a_list_changed_in_place_is_seen_by_every_name_holding_it(results):
    assert verdicts(results, "test_list_extended_in_place") == {
        "ran": ["alpha"],
        "skipped": [],
        "undecided": [],
    }
