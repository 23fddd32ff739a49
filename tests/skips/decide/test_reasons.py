"""Skip reasons written as f-strings read as pytest would print them, per test class."""

COMMON = """
import unittest


class ModelTesterMixin:
    has_attentions = True
    all_model_classes = ()

    def test_attention_outputs(self):
        if not self.has_attentions:
            self.skipTest(reason=f"{self.__class__.__name__} has no attentions")

    def test_sdpa(self):
        if not self.has_attentions:
            self.skipTest(f"{self.all_model_classes[0].__name__} does not support SDPA")

    def test_other(self):
        if not self.has_attentions:
            self.skipTest(f"{self.model_tester.name} is {len(self.all_model_classes)} models")
"""
MODEL = """
import unittest
from ...test_modeling_common import ModelTesterMixin

class NoAttnModelTest(ModelTesterMixin, unittest.TestCase):
    has_attentions = False
    all_model_classes = (NoAttnModel, NoAttnForCausalLM) if is_torch_available() else ()
"""


def test_class_names_are_filled_in_and_the_rest_marked(make_repo, scan):
    repo = make_repo(
        {"tests/test_modeling_common.py": COMMON, "tests/models/noattn/test_modeling_noattn.py": MODEL},
        with_common=False,
    )
    results = scan(repo)
    assert results["test_attention_outputs"]["reasons_skipped"] == [
        "noattn: NoAttnModelTest has no attentions"
    ]
    assert results["test_sdpa"]["reasons_skipped"] == ["noattn: NoAttnModel does not support SDPA"]
    assert results["test_other"]["reasons_skipped"] == [
        "noattn: <unevaluated: self.model_tester.name> is <unevaluated: len(self.all_model_classes)> models"
    ]
