"""Unary minus, multiplication, floor division and identity with None/True/False read as Python
computes them: a skip behind them is decided, where it was undecided (or wrong for ``1 is True``).
``unknown or 3`` is true, but its value is unknown."""

import pytest

from tests.skips.conftest import verdicts
from tests.skips.interp.conftest import scan_alpha

COMMON = """
import unittest


class ModelTesterMixin:
    def test_negative(self):
        if -1 < 0:
            self.skipTest("minus one is negative")

    def test_product(self):
        if 3 * 2.5 == 7.5 and 7 // 2 == 3:
            self.skipTest("arithmetic")

    def test_one_is_not_true(self):
        if 1 is True:
            self.skipTest("never: 1 and True are two objects")

    def test_or_with_a_true_operand(self):
        if pick() or 3:
            self.skipTest("true whatever pick() gives")

    def test_value_of_or_with_an_unknown_operand(self):
        if (pick() or 3) == 3:
            self.skipTest("only when pick() gives a false value")

    def test_none_is_none(self):
        if None is None:
            self.skipTest("one None")
"""


@pytest.mark.parametrize(
    "test", ["test_negative", "test_product", "test_none_is_none", "test_or_with_a_true_operand"]
)
def test_a_computed_condition_decides_the_skip(results, test):
    assert verdicts(results, test) == {"ran": [], "skipped": ["alpha"], "undecided": []}


def test_identity_with_true_is_identity(results):
    assert verdicts(results, "test_one_is_not_true") == {"ran": ["alpha"], "skipped": [], "undecided": []}


def test_the_value_of_or_is_unknown_when_an_earlier_operand_is(results):
    assert verdicts(results, "test_value_of_or_with_an_unknown_operand") == {
        "ran": [],
        "skipped": [],
        "undecided": ["alpha"],
    }


def test_a_container_holding_an_unknown_value_is_not_compared(make_repo, scan):
    common = """
class ModelTesterMixin:
    def test_equal_lists(self):
        if [pick()] != [1]:
            self.skipTest("only when pick() does not give 1")

    def test_membership(self):
        if 1 not in [pick(), 2]:
            self.skipTest("only when pick() does not give 1")

    def test_key_membership(self):
        if "b" not in {"a": pick()}:
            self.skipTest("a dict's keys are known")
"""
    results = scan_alpha(make_repo, scan, common)
    for test in ("test_equal_lists", "test_membership"):
        assert verdicts(results, test) == {"ran": [], "skipped": [], "undecided": ["alpha"]}
    assert verdicts(results, "test_key_membership") == {"ran": [], "skipped": ["alpha"], "undecided": []}
