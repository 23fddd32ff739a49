"""A test under a decorator factory written without its call never runs its body: it is inert.

``@is_flaky`` without parentheses makes the test the factory's inner decorator, which returns a
function and checks nothing: pytest says PASSED, and the analyzer says ran, as pytest does. Found
with ``--inert``, such a pair is inert (on the 2026 snapshot of transformers,
``GenerationTesterMixin.test_prompt_lookup_decoding_matches_greedy_search`` for the 201 models that
run it).
"""

import json

from model_debugging.skips.command import main as scan_main

GENERATION = """
from transformers.testing_utils import is_flaky


class GenerationTesterMixin:
    def test_greedy_generate(self):
        self.assertTrue(self.model_tester is None)

    @is_flaky
    def test_prompt_lookup(self):
        self.assertTrue(self.model_tester is None)

    @is_flaky()
    def test_sample(self):
        self.assertTrue(self.model_tester is None)
"""
MODEL = """
import unittest

from ...generation.test_utils import GenerationTesterMixin
from ...test_modeling_common import ModelTesterMixin


class BertModelTest(ModelTesterMixin, GenerationTesterMixin, unittest.TestCase):
    all_model_classes = ()
"""


def test_a_bare_is_flaky_test_ran_and_is_inert(make_repo, tmp_path):
    repo = make_repo(
        {"tests/generation/test_utils.py": GENERATION, "tests/models/bert/test_modeling_bert.py": MODEL}
    )
    output = tmp_path / "out"
    assert scan_main(["--repo", str(repo), "--output_dir", str(output), "--no_cache", "--inert"]) == 0
    result = json.loads((output / "all_tests_scan_result.json").read_text(encoding="utf-8"))
    assert result["test_prompt_lookup"]["models_ran"] == ["bert"]  # the verdict: pytest passes it
    inert = {
        test: result[test]["combined"]["models_inert"]
        for test in ("test_prompt_lookup", "test_sample", "test_greedy_generate")
    }
    assert inert == {"test_prompt_lookup": ["bert"], "test_sample": [], "test_greedy_generate": []}
