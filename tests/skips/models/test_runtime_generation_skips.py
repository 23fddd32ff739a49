"""Run-time skips of the generation tests, decided from the library read statically.

Each mechanism has a model that must run (``alpha``) and one that must skip (``beta``):
``get_text_config`` and sub-configurations built from the tester's dict, ``config.to_dict()``
keys, the output class of ``forward`` and its cache gated on ``use_cache``, the tester's literal
inputs dict, a configuration that branches set differently, and a class method of the library that
returns one expression.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree

GENERATION = """
import inspect


class GenerationTesterMixin:
    model_tester = None
    all_model_classes = ()

    def prepare_config_and_inputs_for_generate(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        filtered = {k: v for k, v in inputs_dict.items() if k not in ["use_cache", "labels"]}
        text_config = config.get_text_config(decoder=True)
        if text_config.eos_token_id is not None and text_config.pad_token_id is None:
            text_config.pad_token_id = text_config.eos_token_id
        text_config.eos_token_id = None
        return config, filtered

    def test_bos_of_text_part(self):
        config, _ = self.prepare_config_and_inputs_for_generate()
        if config.get_text_config(decoder=True).bos_token_id is None:
            self.skipTest(reason="bos_token_id is None")

    def test_text_part_caches(self):
        config, _ = self.prepare_config_and_inputs_for_generate()
        if not hasattr(config.get_text_config(), "use_cache"):
            self.skipTest(reason="doesn't support caching")

    def test_encoder_keys(self):
        config, _ = self.prepare_config_and_inputs_for_generate()
        if any(name for name in config.to_dict() if name.startswith("encoder")):
            self.skipTest(reason="derived from an encoder-decoder model")

    def test_outputs(self):
        config, inputs = self.prepare_config_and_inputs_for_generate()
        for model_class in self.all_model_classes:
            outputs = model_class(config).eval()(**inputs, use_cache=True)
            if "past_key_values" not in outputs:
                self.skipTest(reason="This model doesn't return `past_key_values`")

    def test_outputs_without_cache(self):
        config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
        inputs["use_cache"] = False
        for model_class in self.all_model_classes:
            if "past_key_values" not in model_class(config)(**inputs):
                self.skipTest(reason="no cache without use_cache")

    def test_inputs_keys(self):
        config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
        del inputs["input_ids"]
        if "attention_mask" not in inputs or "input_ids" in inputs:
            self.skipTest(reason="Model dummy inputs should contain padding in their attention mask")

    def test_pad_of_tester(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.pad_token_id is None:
            self.skipTest(reason="pad_token_id is None")

    def test_decoder_flag(self):
        config, _ = self.prepare_config_and_inputs_for_generate()
        if not config.is_decoder:
            self.skipTest(reason="not a decoder")

    def test_loop_that_may_continue(self):
        config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
        ran_any_model = False
        for model_class in self.all_model_classes:
            if inputs["input_ids"].max() > 2:
                continue
            ran_any_model = True
        if not ran_any_model:
            self.skipTest(reason="All model classes in this test were left out")

    def test_default_cache(self):
        config, _ = self.prepare_config_and_inputs_for_generate()
        for model_class in self.all_model_classes:
            if config.is_encoder_decoder or not model_class._supports_default_dynamic_cache():
                self.skipTest(reason="This model does not support the quantized cache format")

    def test_config_set_in_a_branch(self):
        config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
        if inputs["input_ids"].max() > 2:
            config.is_decoder = True
        if not hasattr(config, "use_cache"):
            self.skipTest(reason="the configuration has no use_cache")
"""

MODEL_TEST = """
import unittest
from transformers import {name}Config, {name}Model
from ...generation.test_utils import GenerationTesterMixin


class {name}ModelTester:
    def __init__(self, parent, vocab_size=99):
        self.parent = parent
        self.pad_token_id = {pad}
        self.text_config = {text_config}

    def get_config(self):
        return {name}Config(pad_token_id=self.pad_token_id{passed})

    def prepare_config_and_inputs_for_common(self):
        config = self.get_config()
        inputs_dict = {inputs}
        return config, inputs_dict


class {name}ModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
{override}"""

OVERRIDE = """
    def prepare_config_and_inputs_for_generate(self):
        config, inputs = super().prepare_config_and_inputs_for_generate()
        config.is_decoder = True
        return config, inputs
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            config_class = None
            _is_stateful = False

            @classmethod
            def _supports_default_dynamic_cache(cls) -> bool:
                "Whether the model can use a DynamicCache."
                return not cls._is_stateful and all(name not in cls.__name__.lower() for name in ["reformer"])
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: dict = {}
            is_encoder_decoder: bool = False
            is_decoder: bool = False
            bos_token_id: int | None = None
            eos_token_id: int | None = None
            pad_token_id: int | None = None

            def get_text_config(self, decoder=None, encoder=None):
                pass
    """,
    "src/transformers/modeling_outputs.py": """
        class CausalLMOutputWithPast(ModelOutput):
            logits: torch.FloatTensor | None = None
            past_key_values: Cache | None = None
    """,
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("alpha", "AlphaConfig"), ("beta", "BetaConfig")])
    """,
    "src/transformers/models/alpha/configuration_alpha.py": """
        class AlphaTextConfig(PreTrainedConfig):
            use_cache: bool = True

        class AlphaConfig(PreTrainedConfig):
            model_type = "alpha"
            sub_configs = {"text_config": AlphaTextConfig}
            use_cache: bool = True
    """,
    "src/transformers/models/alpha/modeling_alpha.py": """
        from ...modeling_outputs import CausalLMOutputWithPast

        class AlphaModel(PreTrainedModel):
            config: AlphaConfig

            def forward(self, input_ids=None, past_key_values=None, use_cache=None) -> tuple | CausalLMOutputWithPast:
                use_cache = use_cache if use_cache is not None else self.config.use_cache
                if self.gradient_checkpointing and self.training:
                    use_cache = False
                if use_cache and past_key_values is None:
                    past_key_values = DynamicCache(config=self.config)
                return CausalLMOutputWithPast(past_key_values=past_key_values)
    """,
    "src/transformers/models/beta/configuration_beta.py": """
        class BetaConfig(PreTrainedConfig):
            model_type = "beta"
            encoder_layers: int = 2
    """,
    "src/transformers/models/beta/modeling_beta.py": """
        class BetaOutput(ModelOutput):
            logits: torch.FloatTensor | None = None
            cache_params: object = None

        class BetaModel(PreTrainedModel):
            config: BetaConfig
            _is_stateful = True

            def forward(self, input_ids=None, use_cache=None) -> BetaOutput:
                return BetaOutput()
    """,
}


@pytest.fixture
def results(make_repo, scan):
    alpha = MODEL_TEST.format(
        name="Alpha",
        pad="vocab_size - 1",
        text_config='{"bos_token_id": 1, "eos_token_id": 2}',
        passed=", text_config=self.text_config",
        override=OVERRIDE,
        inputs='{"input_ids": ids_tensor([2, 7], 99), "attention_mask": ids_tensor([2, 7], 2)}',
    )
    beta = MODEL_TEST.format(
        name="Beta", pad="None", text_config="None", passed="", override="", inputs='{"input_ids": input_ids}'
    )
    root = make_repo(
        {
            "tests/generation/test_utils.py": GENERATION,
            "tests/models/alpha/test_modeling_alpha.py": alpha,
            "tests/models/beta/test_modeling_beta.py": beta,
        }
    )
    return scan(write_tree(root, LIBRARY))


@pytest.mark.parametrize(
    ("test", "reason"),
    [
        # alpha's text part gets bos_token_id from the tester's dict; beta's flat config has none
        ("test_bos_of_text_part", "bos_token_id is None"),
        # the sub-configuration class declares use_cache; beta's configuration does not
        ("test_text_part_caches", "doesn't support caching"),
        # to_dict() holds beta's encoder_layers field
        ("test_encoder_keys", "derived from an encoder-decoder model"),
        # beta's forward returns an output class without past_key_values; alpha's cache follows use_cache
        ("test_outputs", "This model doesn't return `past_key_values`"),
        # beta's literal inputs dict has no attention_mask, and `del` removed input_ids from both
        ("test_inputs_keys", "Model dummy inputs should contain padding in their attention mask"),
        # `vocab_size - 1` passed by the tester is a number, never None
        ("test_pad_of_tester", "pad_token_id is None"),
        # alpha's test class overrides the helper and calls super(): its setting is followed
        ("test_decoder_flag", "not a decoder"),
        # a branch only the run decides sets is_decoder: the configuration's class stays known
        ("test_config_set_in_a_branch", "the configuration has no use_cache"),
        # the library's class method returns one expression of class facts: beta is stateful
        ("test_default_cache", "This model does not support the quantized cache format"),
    ],
)
def test_library_facts_decide_the_generation_skip(results, test, reason):
    assert verdicts(results, test) == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}
    assert results[test]["reasons_skipped"] == [f"beta: {reason}"]


def test_use_cache_false_in_the_inputs_means_no_cache_returned(results):
    assert verdicts(results, "test_outputs_without_cache") == {
        "ran": [],
        "skipped": ["alpha", "beta"],
        "undecided": [],
    }


AUTO_PART = {
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("alpha_text", "AlphaTextConfig"), ("gamma", "GammaConfig")])

        class AutoConfig:
            pass
    """,
    "src/transformers/models/gamma/configuration_gamma.py": """
        class GammaConfig(PreTrainedConfig):
            model_type = "gamma"
            sub_configs = {"text_config": AutoConfig}
            text_config: dict | None = None

            def __post_init__(self, **kwargs):
                if isinstance(self.text_config, dict):
                    self.text_config["model_type"] = self.text_config.get("model_type", "alpha_text")
                    self.text_config = CONFIG_MAPPING[self.text_config["model_type"]](**self.text_config)
    """,
    "src/transformers/models/gamma/modeling_gamma.py": """
        class GammaModel(PreTrainedModel):
            config: GammaConfig
    """,
}


def test_an_auto_part_without_model_type_takes_the_post_init_default(make_repo, scan):
    """The tester's dict names no model_type: GammaConfig's __post_init__ default picks the class."""
    files = {"tests/generation/test_utils.py": GENERATION}
    for name, bos in (("alpha", 1), ("beta", None)):  # same configuration class, bos passed or not
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            name="Gamma",
            pad="0",
            text_config=f'{{"bos_token_id": {bos}}}',
            passed=", text_config=self.text_config",
            override="",
            inputs='{"input_ids": input_ids}',
        )
    results = scan(write_tree(make_repo(files), {**LIBRARY, **AUTO_PART}))
    assert verdicts(results, "test_bos_of_text_part") == {
        "ran": ["alpha"],
        "skipped": ["beta"],
        "undecided": [],
    }


def test_a_flag_set_after_a_continue_only_the_run_decides_is_unknown_after_the_loop(results):
    """Every iteration may `continue` before `ran_any_model = True`: the final skip is undecided."""
    assert verdicts(results, "test_loop_that_may_continue") == {
        "ran": [],
        "skipped": [],
        "undecided": ["alpha", "beta"],
    }


TESTER_GENERATE = """
    def prepare_config_and_inputs_for_generate(self, batch_size=None):
        config = self.get_config()
        if batch_size == {decoder_batch}:
            config.is_decoder = True
        return config, {{"input_ids": ids_tensor([batch_size, 7], 99)}}
"""
DELEGATE = """
    def prepare_config_and_inputs_for_generate(self, batch_size=2):
        return self.model_tester.prepare_config_and_inputs_for_generate(batch_size=batch_size)
"""


def test_a_helper_handed_to_the_tester_runs_the_testers_method_with_its_arguments(make_repo, scan):
    """The test class's helper returns the tester's own ``prepare_config_and_inputs_for_generate``:
    it is run on the tester's source with ``batch_size=2``; alpha's sets is_decoder for that size,
    beta's only for another."""
    files = {"tests/generation/test_utils.py": GENERATION}
    for name, size in (("alpha", 2), ("beta", 3)):
        test_file = MODEL_TEST.format(
            name=name.title(), pad="0", text_config="None", passed="", override=DELEGATE, inputs="{}"
        )
        files[f"tests/models/{name}/test_modeling_{name}.py"] = test_file.replace(
            "        return config, inputs_dict\n",
            "        return config, inputs_dict\n" + TESTER_GENERATE.format(decoder_batch=size),
        )
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_decoder_flag") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}


# The decoder part comes from a method of the tester that calls the class a tester attribute names,
# with the tester's own bos_token_id: 1 for gamma (runs), None for delta (skips).
PART_METHOD_TEST = """
import unittest
from transformers import GammaConfig, GammaTextConfig, GammaModel
from ...generation.test_utils import GenerationTesterMixin


class {name}ModelTester:
    module_config_class = GammaTextConfig

    def __init__(self, parent):
        self.parent = parent
        self.bos_token_id = {bos}

    def get_decoder_config(self):
        return self.module_config_class(bos_token_id=self.bos_token_id)

    def get_config(self):
        return GammaConfig(decoder=self.get_decoder_config())

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{}}


class {name}ModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = (GammaModel,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

PART_METHOD_LIBRARY = {
    **LIBRARY,
    "src/transformers/models/gamma/configuration_gamma.py": """
        class GammaTextConfig(PreTrainedConfig):
            model_type = "gamma_text"

        class GammaConfig(PreTrainedConfig):
            model_type = "gamma"
            sub_configs = {"decoder": GammaTextConfig}
    """,
    "src/transformers/models/gamma/modeling_gamma.py": """
        class GammaModel(PreTrainedModel):
            config: GammaConfig
    """,
}


def test_a_part_built_by_a_tester_method_holds_the_testers_values(make_repo, scan):
    root = make_repo(
        {
            "tests/generation/test_utils.py": GENERATION,
            "tests/models/gamma/test_modeling_gamma.py": PART_METHOD_TEST.format(name="Gamma", bos="1"),
            "tests/models/delta/test_modeling_delta.py": PART_METHOD_TEST.format(name="Delta", bos="None"),
        }
    )
    results = scan(write_tree(root, PART_METHOD_LIBRARY))
    assert verdicts(results, "test_bos_of_text_part") == {
        "ran": ["gamma"],
        "skipped": ["delta"],
        "undecided": [],
    }
