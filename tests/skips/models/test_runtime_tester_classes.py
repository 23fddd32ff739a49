"""A model class a tester names in its class body, compared in a common test's loop.

T5Gemma's tester sets ``token_classification_class = T5GemmaForTokenClassification`` under ``if
is_torch_available():``; ``test_generate_continue_from_past_key_values`` skips the class it names.
Alpha's only model class is that one (must skip), beta's is another (must run).
"""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.fixture_sources import PRETRAINED_MODEL, generation_test_class

GENERATION = """
class GenerationTesterMixin:
    model_tester = None

    def test_token_classification(self):
        for model_class in self.all_model_classes:
            if model_class == self.model_tester.token_classification_class:
                self.skipTest(reason="token classification")
"""

MODEL_TEST = """
import unittest
from transformers import {title}Model, {title}ForTokenClassification
from ...generation.test_utils import GenerationTesterMixin


class {title}ModelTester:
    if is_torch_available():
        token_classification_class = {title}ForTokenClassification

    def __init__(self, parent):
        self.parent = parent
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": PRETRAINED_MODEL,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            is_decoder: bool = False
    """,
}


def test_a_model_class_the_tester_names_is_that_class(make_repo, scan):
    files, library = {"tests/generation/test_utils.py": GENERATION}, dict(LIBRARY)
    for model, tested in (("alpha", "AlphaForTokenClassification"), ("beta", "BetaModel")):
        title = model.title()
        files[f"tests/models/{model}/test_modeling_{model}.py"] = MODEL_TEST.format(
            title=title
        ) + generation_test_class(title, tested)
        library[f"src/transformers/models/{model}/modeling_{model}.py"] = (
            f"class {title}Model(PreTrainedModel):\n    pass\n\n\n"
            f"class {title}ForTokenClassification(PreTrainedModel):\n    pass\n"
        )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_token_classification") == {
        "ran": ["beta"],
        "skipped": ["alpha"],
        "undecided": [],
    }
