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


CAUSAL_LM_TESTER = """
from .test_modeling_common import ModelTesterMixin


class CausalLMModelTester:
    base_model_class = None

    def __init__(self, parent):
        self.parent = parent


class CausalLMModelTest(ModelTesterMixin):
    model_tester_class = None
    all_model_classes = None

    def setUp(self):
        self.model_tester = self.model_tester_class(self)
        if self.all_model_classes is None:
            self.all_model_classes = self.model_tester.all_model_classes
"""


def test_the_first_model_class_of_a_tester_listing_them_by_convention_is_named(make_repo, scan):
    """A tester that names only its base model class (transformers' ``causal_lm_tester.py``): the
    test class's ``all_model_classes`` is no literal list, the library's classes give it."""
    repo = make_repo(
        {
            "tests/test_modeling_common.py": COMMON,
            "tests/causal_lm_tester.py": CAUSAL_LM_TESTER,
            "tests/models/apertus/test_modeling_apertus.py": """
                import unittest
                from transformers import ApertusModel
                from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester

                class ApertusModelTester(CausalLMModelTester):
                    base_model_class = ApertusModel

                class ApertusModelTest(CausalLMModelTest, unittest.TestCase):
                    model_tester_class = ApertusModelTester
                    has_attentions = False
            """,
            "src/transformers/modeling_utils.py": "class PreTrainedModel:\n    pass\n",
            "src/transformers/models/apertus/modeling_apertus.py": """
                from ...modeling_utils import PreTrainedModel

                class ApertusModel(PreTrainedModel):
                    pass

                class ApertusForCausalLM(PreTrainedModel):
                    pass
            """,
        },
        with_common=False,
    )
    assert scan(repo)["test_sdpa"]["reasons_skipped"] == ["apertus: ApertusModel does not support SDPA"]
