"""``a or b`` / ``a and b`` with ``a`` known only at run time: when ``b`` decides the truth, the
truth is known but the value is not (it is ``a`` when ``a`` decides). A comparison of that value,
or a reason made of it, is left to the run; a condition on its truth is decided."""

import pytest

from tests.skips.conftest import verdicts

COMMON = """
import os
import unittest


class ModelTesterMixin:
    def test_or_default_compared(self):
        mode = os.environ.get("ATTN_MODE") or "eager"
        if mode == "eager":
            self.skipTest("eager only")

    def test_and_compared(self):
        size = os.environ.get("SIZE") and 0
        if size == 0:
            self.skipTest("only when SIZE is set")

    def test_or_truth(self):
        if os.environ.get("ATTN_MODE") or "eager":
            self.skipTest("the default is true")

    def test_and_truth(self):
        if os.environ.get("SIZE") and 0:
            self.skipTest("never: the last operand is false")

    def test_or_reason(self):
        why = os.environ.get("WHY") or "a default reason"
        if why:
            self.skipTest(why)
"""


@pytest.mark.parametrize("test", ["test_or_default_compared", "test_and_compared"])
def test_the_value_of_an_operation_an_unknown_operand_may_give_is_unknown(results, test):
    assert verdicts(results, test) == {"ran": [], "skipped": [], "undecided": ["alpha"]}


def test_the_truth_an_operand_decides_is_known(results):
    assert verdicts(results, "test_or_truth")["skipped"] == ["alpha"]
    assert verdicts(results, "test_and_truth")["ran"] == ["alpha"]


def test_a_reason_an_unknown_operand_may_give_is_not_the_default(results):
    assert verdicts(results, "test_or_reason")["skipped"] == ["alpha"]
    (reason,) = results["test_or_reason"]["reasons_skipped"]
    assert reason == "alpha: <unevaluated: os.environ.get('WHY') or 'a default reason'>"
