"""``"past_key_values" in outputs`` for a composite model whose language model keeps the cache
(``AutoModel.from_config(config.text_config)``), decided from the part's class and ``use_cache``."""

from tests.skips.conftest import verdicts, write_tree

GENERATION = """
class GenerationTesterMixin:
    model_tester = None

    def test_cache_returned(self):
        for model_class in self.all_model_classes:
            config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
            outputs = model_class(config)(**inputs)
            if "past_key_values" not in outputs:
                self.skipTest(reason="This model doesn't return `past_key_values`")
"""

MODEL_TEST = """
import unittest
from transformers import VlmConfig, VlmModel
from ...generation.test_utils import GenerationTesterMixin


class VlmModelTester:
    def __init__(self, parent):
        self.text_config = {text_config}

    def get_config(self):
        return VlmConfig(text_config=self.text_config)

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{"input_ids": ids_tensor([2, 7], 99)}}


class VlmModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = (VlmModel,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = VlmModelTester(self)
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            config_class = None

            def __init__(self, config):
                self.config = config
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: ClassVar[dict] = {}
    """,
    "src/transformers/modeling_outputs.py": """
        class BaseModelOutputWithPast(ModelOutput):
            last_hidden_state: torch.FloatTensor | None = None
            past_key_values: Cache | None = None
    """,
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("text", "TextConfig"), ("vlm", "VlmConfig")])

        class AutoConfig:
            pass
    """,
    "src/transformers/models/auto/modeling_auto.py": """
        MODEL_MAPPING_NAMES = OrderedDict([("text", "TextModel"), ("vlm", "VlmModel")])

        class AutoModel:
            _model_mapping = MODEL_MAPPING
    """,
    "src/transformers/models/text/configuration_text.py": """
        class TextConfig(PreTrainedConfig):
            model_type = "text"
            use_cache: bool = True
    """,
    "src/transformers/models/text/modeling_text.py": """
        from ...modeling_outputs import BaseModelOutputWithPast

        class TextModel(PreTrainedModel):
            config: TextConfig

            def __init__(self, config):
                super().__init__(config)
                self.layers = nn.ModuleList([nn.Linear(2, 2)])

            def forward(self, input_ids=None, past_key_values=None, use_cache=None) -> BaseModelOutputWithPast:
                use_cache = use_cache if use_cache is not None else self.config.use_cache
                if use_cache and past_key_values is None:
                    past_key_values = DynamicCache(config=self.config)
                return BaseModelOutputWithPast(past_key_values=past_key_values)
    """,
    "src/transformers/models/vlm/configuration_vlm.py": """
        class VlmConfig(PreTrainedConfig):
            model_type = "vlm"
            sub_configs = {"text_config": AutoConfig}
    """,
    "src/transformers/models/vlm/modeling_vlm.py": """
        from ...modeling_outputs import BaseModelOutputWithPast

        class VlmModel(PreTrainedModel):
            config: VlmConfig

            def __init__(self, config):
                super().__init__(config)
                self.language_model = AutoModel.from_config(config.text_config)

            def forward(self, input_ids=None, past_key_values=None, **kwargs) -> BaseModelOutputWithPast:
                outputs = self.language_model(input_ids=input_ids, past_key_values=past_key_values, **kwargs)
                return BaseModelOutputWithPast(past_key_values=outputs.past_key_values)
    """,
}


def test_the_cache_of_a_composite_model_follows_its_language_models_use_cache(make_repo, scan):
    files = {"tests/generation/test_utils.py": GENERATION}
    text_configs = {
        "alpha": '{"model_type": "text"}',  # the part's class default: use_cache True
        "beta": '{"model_type": "text", "use_cache": False}',
        "gamma": "make_text_config()",  # not read: the part's use_cache is unknown
    }
    for name, text_config in text_configs.items():
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(text_config=text_config)
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_cache_returned") == {
        "ran": ["alpha"],
        "skipped": ["beta"],
        "undecided": ["gamma"],
    }
