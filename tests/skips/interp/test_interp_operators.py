"""Unary minus, multiplication, floor division and identity with None/True/False read as Python
computes them: a skip behind them is decided, where it was undecided (or wrong for ``1 is True``)."""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_skips import LIBRARY, MODEL_TEST

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

    def test_none_is_none(self):
        if None is None:
            self.skipTest("one None")
"""


@pytest.fixture
def results(make_repo, scan):
    files = {
        "tests/test_modeling_common.py": COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
    }
    return scan(write_tree(make_repo(files), LIBRARY))


@pytest.mark.parametrize("test", ["test_negative", "test_product", "test_none_is_none"])
def test_a_computed_condition_decides_the_skip(results, test):
    assert verdicts(results, test) == {"ran": [], "skipped": ["alpha"], "undecided": []}


def test_identity_with_true_is_identity(results):
    assert verdicts(results, "test_one_is_not_true") == {"ran": ["alpha"], "skipped": [], "undecided": []}
