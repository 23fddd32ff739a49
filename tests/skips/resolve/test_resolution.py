"""What the scanner predicts for classes resolved across files, imports and testers."""

from tests.skips.conftest import verdicts

CAUSAL_LM_TESTER = """
from .test_modeling_common import ModelTesterMixin
from .generation.test_utils import GenerationTesterMixin


class CausalLMModelTester:
    def __init__(self, parent, batch_size=2, is_training=True):
        self.parent = parent
        self.is_training = is_training


class CausalLMModelTest(ModelTesterMixin, GenerationTesterMixin):
    model_tester_class = None

    def setUp(self):
        self.model_tester = self.model_tester_class(self)
"""

VLM_TESTER = """
from .test_modeling_common import ModelTesterMixin


class VLMModelTester:
    def __init__(self, parent, **kwargs):
        kwargs.setdefault("is_training", True)
        for key, value in kwargs.items():
            setattr(self, key, value)


class VLMModelTest(ModelTesterMixin):
    model_tester_class = None
    has_attentions = False

    def setUp(self):
        self.model_tester = self.model_tester_class(self)
"""


def test_causal_lm_tester_bases_and_tester_defaults(make_repo, scan):
    repo = make_repo(
        {
            "tests/causal_lm_tester.py": CAUSAL_LM_TESTER,
            "tests/models/llama/test_modeling_llama.py": """
                import unittest
                from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester

                class LlamaModelTester(CausalLMModelTester):
                    pass

                class LlamaModelTest(CausalLMModelTest, unittest.TestCase):
                    model_tester_class = LlamaModelTester
            """,
            "tests/models/frozen/test_modeling_frozen.py": """
                import unittest
                from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester

                class FrozenModelTester(CausalLMModelTester):
                    def __init__(self, parent, is_training=False):
                        super().__init__(parent, is_training=is_training)

                class FrozenModelTest(CausalLMModelTest, unittest.TestCase):
                    model_tester_class = FrozenModelTester
            """,
        }
    )
    results = scan(repo)
    assert results["test_training"]["models_ran"] == ["llama"]
    assert results["test_training"]["reasons_skipped"] == [
        "frozen: ModelTester is not configured to run training tests"
    ]
    assert results["test_greedy_generate"]["models_ran"] == ["frozen", "llama"]
    assert results["test_greedy_generate"]["origin"] == "GenerationMixin"


def test_vlm_tester_setdefault_and_class_flag(make_repo, scan):
    repo = make_repo(
        {
            "tests/vlm_tester.py": VLM_TESTER,
            "tests/models/llava/test_modeling_llava.py": """
                import unittest
                from ...vlm_tester import VLMModelTest, VLMModelTester

                class LlavaVisionText2TextModelTester(VLMModelTester):
                    pass

                class LlavaForConditionalGenerationModelTest(VLMModelTest, unittest.TestCase):
                    model_tester_class = LlavaVisionText2TextModelTester
            """,
        }
    )
    results = scan(repo)
    assert results["test_training"]["models_ran"] == ["llava"]
    skip = results["test_attention_outputs"]["skips"][0]
    assert skip == {
        "model": "llava",
        "reason": "Model does not output attentions",
        "kind": "flag_guard",
        "test_class": "LlavaForConditionalGenerationModelTest",
        "file": "tests/test_modeling_common.py",
        "line": 22,
    }


def test_subclass_of_another_models_test_class_through_relative_import(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/bert/test_modeling_bert.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class BertModelTester:
                    is_training = False

                class BertModelTest(ModelTesterMixin, unittest.TestCase):
                    test_resize_embeddings = False

                    def setUp(self):
                        self.model_tester = BertModelTester()
            """,
            "tests/models/roberta/test_modeling_roberta.py": """
                import unittest
                from ..bert.test_modeling_bert import BertModelTest, BertModelTester

                class RobertaModelTest(BertModelTest):
                    test_resize_embeddings = True

                    def setUp(self):
                        self.model_tester = BertModelTester(self, is_training=True)
            """,
        }
    )
    results = scan(repo)
    assert results["test_resize_tokens_embeddings"]["models_skipped"] == ["bert"]
    assert results["test_resize_tokens_embeddings"]["models_ran"] == ["roberta"]
    assert results["test_training"]["models_skipped"] == ["bert"]
    assert results["test_training"]["models_ran"] == ["roberta"]


def test_a_test_class_imported_into_a_model_file_is_collected_there_too(make_repo, scan):
    """pytest collects every ``TestCase`` bound in a module, also one it imports: cohere2's file ran
    ``CohereModelTest`` again in 2025 checkouts. Importing only the tester collects nothing more."""
    repo = make_repo(
        {
            "tests/models/bert/test_modeling_bert.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class BertModelTester:
                    pass

                class BertModelTest(ModelTesterMixin, unittest.TestCase):
                    pass
            """,
            "tests/models/gemma/test_modeling_gemma.py": """
                import unittest
                from ...models.bert.test_modeling_bert import BertModelTest, BertModelTester

                class GemmaModelTest(BertModelTest):
                    has_attentions = False
            """,
            "tests/models/helium/test_modeling_helium.py": """
                import unittest
                from ..bert.test_modeling_bert import BertModelTester
                from ...test_modeling_common import ModelTesterMixin

                class HeliumModelTest(ModelTesterMixin, unittest.TestCase):
                    has_attentions = False
            """,
        }
    )
    results = scan(repo)
    assert verdicts(results, "test_attention_outputs") == {
        "ran": ["bert", "gemma"],
        "skipped": ["helium"],
        "undecided": [],
    }


def test_a_model_skips_only_when_every_applicable_class_skips(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/mixed/test_modeling_mixed.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class MixedModelTest(ModelTesterMixin, unittest.TestCase):
                    has_attentions = False

                class MixedBackboneTest(ModelTesterMixin, unittest.TestCase):
                    pass

                class MixedEncoderTest(ModelTesterMixin, unittest.TestCase):
                    @unittest.skip("no encoder forward")
                    def test_forward(self):
                        pass
            """,
            "tests/models/noattn/test_modeling_noattn.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class NoAttnModelTest(ModelTesterMixin, unittest.TestCase):
                    has_attentions = False

                class NoAttnOtherTest(ModelTesterMixin, unittest.TestCase):
                    has_attentions = False
            """,
        }
    )
    results = scan(repo)
    assert results["test_attention_outputs"]["models_ran"] == ["mixed"]
    assert results["test_attention_outputs"]["models_skipped"] == ["noattn"]
    assert results["test_forward"]["models_ran"] == ["mixed", "noattn"]


def test_a_test_does_not_apply_to_models_without_its_mixin(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/a/test_modeling_a.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class AModelTest(ModelTesterMixin, unittest.TestCase):
                    has_attentions = False
            """,
            "tests/models/b/test_modeling_b.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class BModelTest(ModelTesterMixin, unittest.TestCase):
                    pass
            """,
            # the mixin is imported but the test class does not inherit it; the mixin alone is not collected
            "tests/models/tok/test_modeling_tok.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class TokTest(unittest.TestCase):
                    def test_attention_outputs(self):
                        self.skipTest("own test of the same name")

                class TokMixinOnly(ModelTesterMixin):
                    pass
            """,
        }
    )
    entry = scan(repo)["test_attention_outputs"]
    assert entry["models_not_applicable"] == ["tok"]
    assert entry["models_ran"] == ["b"] and entry["models_skipped"] == ["a"]
    assert entry["skipped_proportion"] == 0.5


def test_skip_on_the_class_is_inherited(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/old/test_modeling_old.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                @unittest.skip(reason="deprecated model")
                class OldModelTest(ModelTesterMixin, unittest.TestCase):
                    pass

                class OldDerivedTest(OldModelTest):
                    pass
            """
        }
    )
    entry = scan(repo)["test_forward"]
    assert entry["reasons_skipped"] == ["old: deprecated model"]
    assert entry["skips"][0]["kind"] == "class_decorator"


def test_environment_guards_are_conditions(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/gpu/test_modeling_gpu.py": """
                import unittest
                from transformers.testing_utils import require_torch_gpu, slow
                from ...test_modeling_common import ModelTesterMixin

                class GpuModelTest(ModelTesterMixin, unittest.TestCase):
                    @require_torch_gpu
                    @slow
                    def test_forward(self):
                        run()

                    @unittest.skipIf(not is_torch_greater_or_equal("2.5"), reason="old torch")
                    def test_training(self):
                        run()
            """,
            "tests/models/vision/test_modeling_vision.py": """
                import unittest
                from transformers.testing_utils import require_torch, require_vision
                from ...test_modeling_common import ModelTesterMixin

                @require_torch
                @require_vision
                class VisionModelTest(ModelTesterMixin, unittest.TestCase):
                    pass
            """,
        }
    )
    results = scan(repo)
    assert results["test_attention_outputs"]["conditions"] == ["vision: require_vision"]
    assert results["test_forward"]["models_ran"] == ["gpu", "vision"]
    assert results["test_forward"]["conditions"] == [
        "gpu: require_torch_gpu",
        "gpu: slow",
        "vision: require_vision",
    ]
    assert results["test_training"]["models_ran"] == ["gpu"]
    # no tester, so `self.model_tester.is_training` is known only at run time (never "ran")
    assert results["test_training"]["models_undecided"] == ["vision"]
    assert results["test_training"]["conditions"][0].startswith("gpu: unittest.skipIf(not is_torch_greater")


def test_skip_decorator_aliases_and_multi_line_reasons(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/alias/test_modeling_alias.py": """
                import unittest
                from unittest import skip as skip_this
                from pytest import mark
                from ...test_modeling_common import ModelTesterMixin

                class AliasModelTest(ModelTesterMixin, unittest.TestCase):
                    @skip_this("first " "part")
                    def test_forward(self):
                        run()

                    @mark.skip(
                        reason="a reason written "
                        "over two lines"
                    )
                    def test_training(self):
                        run()
            """
        }
    )
    results = scan(repo)
    assert results["test_forward"]["reasons_skipped"] == ["alias: first part"]
    assert results["test_training"]["reasons_skipped"] == ["alias: a reason written over two lines"]
    assert results["test_training"]["skips"][0]["kind"] == "decorator"


def test_guards_of_helpers_and_super_calls_apply(make_repo, scan):
    repo = make_repo(
        {
            "tests/test_modeling_common.py": """
                class ModelTesterMixin:
                    model_tester = None

                    def check_training(self):
                        if not self.model_tester.is_training:
                            self.skipTest(reason="not training")
                        run()

                    def test_training_checkpointing(self):
                        self.check_training()

                    def test_forward(self):
                        run()
            """,
            "tests/models/frozen/test_modeling_frozen.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class FrozenTester:
                    is_training = False

                class FrozenModelTest(ModelTesterMixin, unittest.TestCase):
                    def setUp(self):
                        self.model_tester = FrozenTester()

                    @pytest.mark.xfail(reason="flaky")
                    def test_training_checkpointing(self):
                        super().test_training_checkpointing()
            """,
            "tests/models/base/test_modeling_base.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                class BaseModelTest(ModelTesterMixin, unittest.TestCase):
                    @unittest.skip("broken upstream")
                    def check_forward(self):
                        pass

                    def test_forward(self):
                        self.check_forward()
            """,
        }
    )
    results = scan(repo)
    assert results["test_training_checkpointing"]["reasons_skipped"] == ["frozen: not training"]
    assert results["test_training_checkpointing"]["skips"][0]["file"] == "tests/test_modeling_common.py"
    assert results["test_forward"]["reasons_skipped"] == ["base: broken upstream"]


def test_a_function_the_test_calls_skips_it_from_its_module_or_the_one_it_is_imported_from(make_repo, scan):
    repo = make_repo(
        {
            "tests/test_helpers.py": """
                import unittest

                def needs_attentions(self):
                    if not self.has_attentions:
                        raise unittest.SkipTest("helper: no attentions")

                def never_skips():
                    return
            """,
            "tests/models/own/test_modeling_own.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin

                def skip_here():
                    pytest.skip("said here")

                class OwnModelTest(ModelTesterMixin, unittest.TestCase):
                    def test_forward(self):
                        skip_here()
            """,
            "tests/models/imported/test_modeling_imported.py": """
                import unittest
                from ...test_modeling_common import ModelTesterMixin
                from ...test_helpers import never_skips, needs_attentions as attentions_needed

                class ImportedModelTest(ModelTesterMixin, unittest.TestCase):
                    def test_forward(self):
                        never_skips()
                        attentions_needed(self)

                class NoAttentionsModelTest(ImportedModelTest):
                    has_attentions = False
            """,
        }
    )
    results = scan(repo)
    assert results["test_forward"]["reasons_skipped"] == ["own: said here"]
    assert results["test_forward"]["models_ran"] == ["imported"]
    assert results["test_forward"]["skips"][0]["file"] == "tests/models/own/test_modeling_own.py"
    (no_attentions,) = [found for found in results["test_forward"]["classes"] if found["status"] == "skipped"]
    assert (no_attentions["test_class"], no_attentions["reason"], no_attentions["file"]) == (
        "NoAttentionsModelTest",
        "helper: no attentions",
        "tests/test_helpers.py",
    )


def test_a_plain_test_case_inherited_from_another_file_is_read_in_full(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/base/test_modeling_base.py": """
                import unittest

                class SharedOverrides(unittest.TestCase):
                    @unittest.skip("shared: no forward")
                    def test_forward(self):
                        pass
            """,
            "tests/models/child/test_modeling_child.py": """
                import unittest
                from ..base.test_modeling_base import SharedOverrides
                from ...test_modeling_common import ModelTesterMixin

                class ChildModelTest(SharedOverrides, ModelTesterMixin):
                    pass
            """,
        }
    )
    entry = scan(repo)["test_forward"]
    assert entry["reasons_skipped"] == ["child: shared: no forward"]
    assert entry["models_not_applicable"] == ["base"]


def test_absolute_tests_package_imports_and_module_aliases(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/abs/test_modeling_abs.py": """
                import unittest as ut
                from tests import test_modeling_common
                from tests.test_modeling_common import ModelTesterMixin as Mixin

                class AbsModelTest(Mixin, ut.TestCase):
                    has_attentions = False

                class AbsOtherTest(test_modeling_common.ModelTesterMixin, ut.TestCase):
                    has_attentions = False
            """,
        }
    )
    assert scan(repo)["test_attention_outputs"]["models_skipped"] == ["abs"]
