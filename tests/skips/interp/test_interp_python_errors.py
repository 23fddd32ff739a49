"""Python's own operations that raise on known values leave the pair undecided, named by the
condition; they never crash the scan nor decide a skip."""

import pytest

from tests.skips.conftest import verdicts

COMMON = """
import unittest


class ModelTesterMixin:
    def test_missing_key(self):
        if {"a": 1}["b"]:
            self.skipTest("never: the lookup raises")

    def test_mixed_order(self):
        if "a" < 1:
            self.skipTest("never: the comparison raises")

    def test_builtin_on_a_class(self):
        for model_class in self.all_model_classes:
            if len(model_class) == 0:
                self.skipTest("never: a class has no length")

    def test_known_lookup(self):
        if {"a": 1}["a"]:
            self.skipTest("a known key")

    def test_formatted_reason(self):
        mode, share, width = "eager", 0.6666, 7
        if {"a": 1}["a"]:
            self.skipTest(
                f"{mode!r} {share:.2f} {mode:>{width}} {[mode, width]} {self.all_model_classes} "
                f"{self.all_model_classes!r} {self.all_model_classes[0]}"
            )
"""


@pytest.mark.parametrize(
    ("test", "condition"),
    [
        ("test_missing_key", "if {'a': 1}['b']: skip"),
        ("test_mixed_order", "if 'a' < 1: skip"),
        ("test_builtin_on_a_class", "if len(model_class) == 0: skip"),
    ],
)
def test_an_operation_python_refuses_is_undecided(results, test, condition):
    assert verdicts(results, test) == {"ran": [], "skipped": [], "undecided": ["alpha"]}
    assert any(condition in line for line in results[test]["conditions"])


def test_the_same_operation_on_values_it_accepts_decides(results):
    assert verdicts(results, "test_known_lookup") == {"ran": [], "skipped": ["alpha"], "undecided": []}


def test_a_reason_is_formatted_as_python_formats_it(results):
    """Conversions and format specs apply to known strings and numbers; a value only the run knows
    (or a container of them) is marked, whatever its placeholder asks."""
    assert results["test_formatted_reason"]["reasons_skipped"] == [
        "alpha: 'eager' 0.67   eager ['eager', 7] <unevaluated: self.all_model_classes> "
        "<unevaluated: self.all_model_classes> <class 'AlphaModel'>"
    ]
