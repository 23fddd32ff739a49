"""A common test that hands itself to a module-level function of its file, and the experts rule.

``test_eager_matches_sdpa_inference`` calls ``_test_eager_matches_sdpa_inference(self, ...)``, a
function of ``tests/test_modeling_common.py`` that skips a model without attentions or without
SDPA; ``test_eager_matches_batched_and_grouped_inference`` skips a model whose file does not use
``@use_experts_implementation`` (``PreTrainedModel._can_set_experts_implementation``). Found
against pytest on the 2026-03-30 snapshot: the scanner called both ran for every model, because
it did not follow the function.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree

COMMON = """
import unittest


def _check_sdpa(self, name, output_attentions, atols=None):
    if not self.has_attentions:
        self.skipTest(reason="Model architecture does not support attentions")
    if not self.all_model_classes[0]._supports_sdpa:
        self.skipTest(f"{self.all_model_classes[0].__name__} does not support SDPA")
    if output_attentions and not self.has_attentions:
        self.skipTest("no attentions to output")


def _check_experts(self, name):
    if not self.all_model_classes[0]._can_set_experts_implementation():
        self.skipTest("Model does not support experts implementation setting")


class ModelTesterMixin:
    has_attentions = True

    def test_sdpa_inference(self):
        _check_sdpa(self, "fp32", False)

    def test_sdpa_with_parameter(self, output_attentions):
        _check_sdpa(self, "fp32", output_attentions)

    def test_experts(self):
        _check_experts(self, "fp32")
"""

MODEL_TEST = """
import unittest
from transformers import {name}Model
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()
    has_attentions = {attentions}
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            _supports_sdpa = False

            @classmethod
            def _can_set_experts_implementation(cls) -> bool:
                class_file = sys.modules[cls.__module__].__file__
                with open(class_file, "r", encoding="utf-8") as f:
                    code = f.read()
                return "@use_experts_implementation" in code
    """,
    # SDPA and experts
    "src/transformers/models/alpha/modeling_alpha.py": """
        @use_experts_implementation
        class AlphaExperts(nn.Module):
            pass

        class AlphaModel(PreTrainedModel):
            _supports_sdpa = True
    """,
    # no SDPA, no experts
    "src/transformers/models/beta/modeling_beta.py": """
        class BetaModel(PreTrainedModel):
            pass
    """,
    # SDPA, but the tests say it has no attentions
    "src/transformers/models/gamma/modeling_gamma.py": """
        class GammaModel(PreTrainedModel):
            _supports_sdpa = True
    """,
}


@pytest.fixture
def results(make_repo, scan):
    files = {"tests/test_modeling_common.py": COMMON}
    for name, attentions in (("alpha", True), ("beta", True), ("gamma", False)):
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            name=name.title(), attentions=attentions
        )
    return scan(write_tree(make_repo(files), LIBRARY))


def test_a_skip_in_a_module_function_the_test_calls_with_itself_is_decided(results):
    assert verdicts(results, "test_sdpa_inference") == {
        "ran": ["alpha"],
        "skipped": ["beta", "gamma"],
        "undecided": [],
    }
    reasons = {skip["model"]: skip["reason"] for skip in results["test_sdpa_inference"]["skips"]}
    assert reasons == {
        "beta": "BetaModel does not support SDPA",
        "gamma": "Model architecture does not support attentions",
    }


def test_an_unknown_argument_does_not_matter_where_the_rest_decides(results):
    assert verdicts(results, "test_sdpa_with_parameter") == {
        "ran": ["alpha"],  # has attentions: the last skip never holds
        "skipped": ["beta", "gamma"],
        "undecided": [],
    }


def test_the_experts_rule_is_read_from_the_base_model(results):
    assert verdicts(results, "test_experts") == {
        "ran": ["alpha"],
        "skipped": ["beta", "gamma"],
        "undecided": [],
    }


CASES_COMMON = """
import unittest

from parameterized import parameterized

PARAMETERS = [(f"{dtype}_plain", dtype, False) for dtype in ("fp16", "fp32")] + [("fp32_attentions", "fp32", True)]


class ModelTesterMixin:
    can_output_attentions = True

    @parameterized.expand(PARAMETERS)
    def test_cases(self, name, dtype, output_attentions):
        if output_attentions and not self.can_output_attentions:
            self.skipTest("cannot output attentions")
"""

CASES_MODEL = """
import unittest
from transformers import AlphaModel
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (AlphaModel,) if is_torch_available() else ()
    can_output_attentions = False
{body}
"""


def test_each_case_runs_with_its_own_arguments(make_repo, scan):
    """Only the last case passes ``output_attentions=True``: a model that cannot output them runs
    the first two cases; one that overrides those two with a skip is left with the last, which skips."""
    overrides = """
    @unittest.skip(reason="not in half precision")
    def test_cases_0_fp16_plain(self):
        pass

    @unittest.skip(reason="not this one either")
    def test_cases_1_fp32_plain(self):
        pass
"""
    files = {
        "tests/test_modeling_common.py": CASES_COMMON,
        "tests/models/alpha/test_modeling_alpha.py": CASES_MODEL.format(name="Alpha", body=""),
        "tests/models/beta/test_modeling_beta.py": CASES_MODEL.format(name="Beta", body=overrides),
    }
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_cases") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}
    # every case skips: the first case's reason stands for them
    assert [skip["reason"] for skip in results["test_cases"]["skips"]] == ["not in half precision"]
