"""Which model classes a common test's loop visits, and what an instance gathers from the models it holds.

Found against pytest on the 2026-03-30 snapshot: a test class's own
``all_generative_model_classes`` (``()`` in Musicgen's, a subset in others) decides the generation
loop; a model's own ``XGenerationMixin`` base (Whisper's, in a file the library index does not read)
makes it generative; and ``post_init`` adds the ``_keep_in_fp32_modules`` of the models an instance
holds (Musicgen's T5 text encoder) to its own. Each has a model that must run and one that must skip.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree

COMMON = """
import copy
import inspect
import unittest


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()

    @property
    def all_generative_model_classes(self):
        return tuple(model_class for model_class in self.all_model_classes if model_class.can_generate())

    def test_logits_to_keep(self):
        for model_class in self.all_generative_model_classes:
            if "logits_to_keep" not in set(inspect.signature(model_class.forward).parameters.keys()):
                self.skipTest(reason="This model does not support `logits_to_keep` argument.")

    def test_keep_in_fp32(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(copy.deepcopy(config))
            if len(model._keep_in_fp32_modules) == 0:
                self.skipTest(reason=f"{model_class.__name__} has no _keep_in_fp32_modules")
"""

MODEL_TEST = """
import unittest
from transformers import {name}Model, {name}ForCausalLM
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent):
        self.parent = parent


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model, {name}ForCausalLM) if is_torch_available() else ()
{generative}
    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

# Every model has a base model without `logits_to_keep` (gamma's can generate too) and a causal LM;
# beta's generates through its own mixin, in a file the library index leaves out. What delta's,
# epsilon's and zeta's base models hold is unknown (a backbone chosen at run time); epsilon's
# configuration has a text part (whose model declares `_keep_in_fp32_modules`), zeta's a plain one.
LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            _keep_in_fp32_modules = None

            def __init__(self, config):
                super().__init__()
                self.config = config

            def post_init(self):
                self._keep_in_fp32_modules = set(self._keep_in_fp32_modules or [])
                for name, module in self.named_children():
                    if keep_fp32 := getattr(module, "_keep_in_fp32_modules", None):
                        self._keep_in_fp32_modules.update(keep_fp32)
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: dict = {}
    """,
    "src/transformers/generation/utils.py": """
        class GenerationMixin:
            def prepare_inputs_for_generation(self, input_ids, **kwargs):
                pass
    """,
    "src/transformers/models/auto/modeling_auto.py": """
        MODEL_MAPPING_NAMES = OrderedDict([("text", "TextEncoderModel"), ("plain", "PlainModel")])
    """,
    "src/transformers/models/plain/modeling_plain.py": """
        class PlainConfig(PreTrainedConfig):
            model_type = "plain"

        class PlainModel(PreTrainedModel):
            config: PlainConfig
    """,
    "src/transformers/models/text/modeling_text.py": """
        class TextConfig(PreTrainedConfig):
            model_type = "text"

        class TextEncoderModel(PreTrainedModel):
            config: TextConfig
            _keep_in_fp32_modules = ["wo"]

            def __init__(self, config):
                super().__init__(config)
                self.wo = nn.Linear(4, 4)
                self.post_init()
    """,
    **{
        f"src/transformers/models/{name.lower()}/modeling_{name.lower()}.py": f"""
        class {name}Config(PreTrainedConfig):
            model_type = "{name.lower()}"
            {sub_configs}

        class {name}Model({model_bases}):
            config: {name}Config

            def __init__(self, config):
                super().__init__(config)
                {holds}
                self.post_init()

            def forward(self, input_ids=None):
                pass

        class {name}ForCausalLM({bases}):
            config: {name}Config

            def __init__(self, config):
                super().__init__(config)
                self.model = {name}Model(config)
                self.post_init()

            def forward(self, input_ids=None{extra}):
                pass
    """
        for name, model_bases, bases, extra, holds, sub_configs in (
            (
                "Alpha",
                "PreTrainedModel",
                "PreTrainedModel, GenerationMixin",
                "",
                "self.text_encoder = TextEncoderModel(config)",
                "",
            ),
            (
                "Beta",
                "PreTrainedModel",
                "BetaGenerationMixin, PreTrainedModel",
                "",
                "self.dense = nn.Linear(4, 4)",
                "",
            ),
            (
                "Gamma",
                "PreTrainedModel, GenerationMixin",
                "PreTrainedModel, GenerationMixin",
                ", logits_to_keep=0",
                "self.dense = nn.Linear(4, 4)",
                "",
            ),
            (
                "Delta",
                "PreTrainedModel",
                "PreTrainedModel, GenerationMixin",
                "",
                "self.vision = load_backbone(config)",
                "",
            ),
            (
                "Epsilon",
                "PreTrainedModel",
                "PreTrainedModel, GenerationMixin",
                ", logits_to_keep=0",
                "self.vision = load_backbone(config)",
                'sub_configs = {"text_config": TextConfig}',
            ),
            (
                "Zeta",
                "PreTrainedModel",
                "PreTrainedModel, GenerationMixin",
                ", logits_to_keep=0",
                "self.vision = load_backbone(config)",
                'sub_configs = {"vision_config": PlainConfig}',
            ),
        )
    },
    "src/transformers/models/beta/generation_beta.py": """
        class BetaGenerationMixin(GenerationMixin):
            pass
    """,
}

# alpha's test class runs no generation loop; gamma's lists only the class that has logits_to_keep
GENERATIVE = {
    "Alpha": "    all_generative_model_classes = ()\n",
    "Beta": "",
    "Gamma": "    all_generative_model_classes = (GammaForCausalLM,) if is_torch_available() else ()\n",
    "Delta": "",
    "Epsilon": "",
    "Zeta": "",
}


@pytest.fixture
def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for name, generative in GENERATIVE.items():
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = MODEL_TEST.format(
            name=name, generative=generative
        )
    return write_tree(make_repo(files), LIBRARY)


def test_the_test_class_s_own_generative_classes_decide_the_loop(checkout, scan):
    """alpha's `()` runs an empty loop; gamma's list leaves out its base model, which can generate
    but has no `logits_to_keep`."""
    outcome = verdicts(scan(checkout), "test_logits_to_keep")
    assert "alpha" in outcome["ran"] and "gamma" in outcome["ran"]


def test_an_instance_gathers_the_fp32_modules_of_the_models_it_holds(checkout, scan):
    """alpha's base model holds a text encoder with `_keep_in_fp32_modules`: its set may not be empty
    (whether post_init reaches it depends on where it sits), so it is undecided, never skipped;
    beta's and gamma's hold only layers: skipped. delta's, epsilon's and zeta's backbones are chosen
    at run time and may declare some, whatever their configurations' parts: undecided."""
    results = scan(checkout)
    assert verdicts(results, "test_keep_in_fp32") == {
        "ran": [],
        "skipped": ["beta", "gamma"],
        "undecided": ["alpha", "delta", "epsilon", "zeta"],
    }


def test_a_model_s_own_generation_mixin_makes_it_generative(checkout, scan):
    """beta's causal LM generates through BetaGenerationMixin, whose file the library index does not
    read: it is visited and skips, as pytest's `"GenerationMixin" in str(cls.__bases__)` says."""
    assert verdicts(scan(checkout), "test_logits_to_keep") == {
        "ran": ["alpha", "epsilon", "gamma", "zeta"],
        "skipped": ["beta", "delta"],
        "undecided": [],
    }
