"""A generated checkout whose common tests each exercise one part of joining runs with the scan.

Three models and common tests with: a skip decorator that is stale (the test passes when it is
ignored) and one that is not, a test only the run decides (undecided statically), a loop that
passes over every class of a model (an inert pass), an environment guard (a disagreement the
machine explains), a ``skipIf`` on the interpreter version (a disagreement it does not) and a
``parameterized.expand`` test. The library under ``src/mylib`` is what the analyzer reads and pytest
imports (``pytest.ini`` puts ``src`` on the path).
"""

COMMON = """
import os
import unittest

from parameterized import parameterized


class ModelTesterMixin:
    all_model_classes = ()
    has_attentions = True

    def test_forward(self):
        for model_class in self.all_model_classes:
            self.assertIsNotNone(model_class())

    def test_gradients(self):
        for model_class in self.all_model_classes:
            if not getattr(model_class, "supports_gradients", False):
                continue
            self.assertTrue(model_class.supports_gradients)

    def test_attentions(self):
        if not self.has_attentions:
            return
        self.assertTrue(self.has_attentions)

    def test_outputs(self):
        for model_class in self.all_model_classes:
            outputs = model_class()()
            if outputs is None:
                self.skipTest(reason="This model returns no outputs")
            self.assertTrue(outputs)

    @unittest.skipUnless(os.environ.get("HAS_GPU"), "test requires a GPU")
    def test_on_gpu(self):
        self.assertTrue(True)

    def test_legacy_api(self):
        self.assertTrue(True)

    @parameterized.expand([("fp32", 4), ("fp16", 2)])
    def test_cases(self, name, size):
        self.assertGreater(size, 0)
"""
HEADER = "import sys\nimport unittest\n\nfrom ...test_modeling_common import ModelTesterMixin\n"
# The library the tests import their model classes from, as transformers' src/transformers:
# the analyzer reads it (never imports it), pytest imports it.
LIBRARY = {
    "src/mylib/modeling_utils.py": "class PreTrainedModel:\n    supports_gradients = False\n",
    "src/mylib/models/alpha/modeling_alpha.py": """
        from mylib.modeling_utils import PreTrainedModel


        class AlphaModel(PreTrainedModel):
            supports_gradients = True

            def __call__(self):
                return {"logits": 1}
        """,
    "src/mylib/models/beta/modeling_beta.py": """
        from mylib.modeling_utils import PreTrainedModel


        class BetaModel(PreTrainedModel):
            def __call__(self):
                return None
        """,
    "src/mylib/models/delta/modeling_delta.py": """
        import unittest

        from mylib.modeling_utils import PreTrainedModel


        class DeltaModel(PreTrainedModel):
            def __call__(self):
                raise unittest.SkipTest("test requires a GPU kernel")
        """,
    "src/mylib/models/gamma/modeling_gamma.py": """
        from mylib.modeling_utils import PreTrainedModel


        class GammaModel(PreTrainedModel):
            supports_gradients = True

            def __call__(self):
                return [1]
        """,
}
MODELS = {
    "alpha": f"""{HEADER}from mylib.models.alpha.modeling_alpha import AlphaModel


class AlphaModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (AlphaModel,)

    @unittest.skip("flaky since the cache refactor")
    def test_forward(self):
        self.assertTrue(True)

    def test_alpha_only(self):
        self.assertTrue(True)
""",
    "beta": f"""{HEADER}from mylib.models.beta.modeling_beta import BetaModel


class BetaModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (BetaModel,)

    @unittest.skipIf(sys.version_info >= (3, 8), "legacy API removed")
    def test_legacy_api(self):
        self.assertTrue(True)
""",
    "delta": f"""{HEADER}from mylib.models.delta.modeling_delta import DeltaModel


class DeltaModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (DeltaModel,)
    has_attentions = False
""",
    "gamma": f"""{HEADER}from mylib.models.gamma.modeling_gamma import GammaModel


class GammaModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (GammaModel,)

    @unittest.skip("crashes on empty input")
    def test_forward(self):
        raise ValueError("empty input")
""",
}


def observed_tree_files() -> dict[str, str]:
    """The checkout's files (path -> text), for ``write_tree``."""
    files = {"tests/__init__.py": "", "tests/models/__init__.py": "", "tests/test_modeling_common.py": COMMON}
    for model, text in MODELS.items():
        files[f"tests/models/{model}/__init__.py"] = ""
        files[f"tests/models/{model}/test_modeling_{model}.py"] = text
    files.update(LIBRARY)
    files["pytest.ini"] = "[pytest]\npythonpath = src\n"
    return files
