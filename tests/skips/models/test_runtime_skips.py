"""Skips decided at run time from the library's own sources, on a tiny fake checkout.

Each mechanism has a model that must skip and one that must run: ``alpha`` supports everything,
``beta`` lacks it. The fake ``src/transformers`` is read statically, never imported.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree

COMMON = """
import copy
import inspect
import unittest

from transformers.conversion_mapping import get_model_conversion_mapping

from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_MAPPING, get_values


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()
    has_attentions = True
    _is_composite = False

    def test_sdpa(self):
        if not self.all_model_classes[0]._supports_sdpa or self._is_composite:
            self.skipTest(f"{self.all_model_classes[0].__name__} does not support SDPA")

    def test_gradient_checkpointing(self):
        for model_class in self.all_model_classes:
            if not model_class.supports_gradient_checkpointing:
                self.skipTest(reason=f"{model_class.__name__} does not support gradient checkpointing")
            run(model_class)

    def test_inputs_embeds(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(config)
            if "inputs_embeds" not in inspect.signature(model.forward).parameters:
                self.skipTest(reason="This model doesn't use `inputs_embeds`")

    def test_sliding_window(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if getattr(config, "sliding_window", 0) is not None and getattr(config, "sliding_window", 0) > 0:
            self.skipTest("sliding window attention is not supported by this test")

    def test_without_bos(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.bos_token_id is None:
            self.skipTest(reason="bos_token_id is None")

    def test_in_mapping(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.__class__ not in MODEL_MAPPING:
            self.skipTest(reason=f"{config.__class__.__name__} not in MODEL_MAPPING")

    def test_decoder_only(self):
        decoder_only = [m for m in self.all_model_classes if m.__name__ in get_values(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)]
        if len(decoder_only) == 0:
            self.skipTest(reason="No decoder-only architecture available for this model.")

    def test_name_list(self):
        for model_class in self.all_model_classes:
            if any(name in model_class.__name__.lower() for name in ["beta", "rwkv"]):
                self.skipTest(reason="Won't fix: old model")

    def test_sub_configs(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if len(config.sub_configs) == 0:
            self.skipTest(reason="No subconfigs so the test does not make sense")

    def test_helper(self):
        self.check_position_ids()

    def check_position_ids(self):
        for model_class in self.all_model_classes:
            if "position_ids" not in inspect.signature(model_class.forward).parameters:
                self.skipTest("Model does not support position_ids")

    @is_flaky
    def test_flaky_bare(self):
        for model_class in self.all_model_classes:
            if "beta" in model_class.__name__.lower():
                self.skipTest(reason="never reached: a bare @is_flaky replaces the body")

    @is_flaky()
    def test_flaky_called(self):
        for model_class in self.all_model_classes:
            if "beta" in model_class.__name__.lower():
                self.skipTest(reason="reached")

    def test_environment(self):
        if not is_torch_bf16_available_on_device(torch_device):
            self.skipTest("bf16 not supported on this device")
        for model_class in self.all_model_classes:
            if not model_class._supports_sdpa:
                self.skipTest("no SDPA")

    def test_early_return(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        if "pixel_values" in inputs_dict:
            return
        if not self.all_model_classes[0]._supports_sdpa:
            self.skipTest("no SDPA")

    def test_conversions(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(copy.deepcopy(config))
            conversions = get_model_conversion_mapping(model, add_legacy=False)
            if len(conversions) == 0:
                self.skipTest(f"No conversion found for {model_class}")

    def test_outputs(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            outputs = model_class(config)(**inputs_dict)
            if "past_key_values" not in outputs:
                self.skipTest("This model doesn't return `past_key_values`")
"""

MODEL_TEST = """
import unittest
from transformers import {name}Config, {name}Model, {name}ForCausalLM
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent, bos_token_id={bos}):
        self.parent = parent
        self.bos_token_id = bos_token_id


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model, {name}ForCausalLM) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            _supports_sdpa = False
            supports_gradient_checkpointing = False
            config_class = None
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: dict = {}
            is_encoder_decoder: bool = False
            bos_token_id: int | None = None
    """,
    "src/transformers/generation/utils.py": """
        class GenerationMixin:
            def prepare_inputs_for_generation(self, input_ids, **kwargs):
                pass
    """,
    "src/transformers/conversion_mapping.py": """
        _MODEL_TO_CONVERSION_PATTERN = {"gamma": "alpha"}

        def _build_checkpoint_conversion_mapping():
            mapping = {"legacy": []}
            mapping["alpha"] = [WeightRenaming("a", "b")]
            for model_type, base_pattern in _MODEL_TO_CONVERSION_PATTERN.items():
                mapping[model_type] = mapping[base_pattern].copy()
            return mapping

        def get_model_conversion_mapping(model, key_mapping=None, hf_quantizer=None, add_legacy=True):
            return []  # its body is left to the run: the scan reads the mapping above
    """,
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("alpha", "AlphaConfig"), ("beta", "BetaConfig")])
    """,
    "src/transformers/models/auto/modeling_auto.py": """
        MODEL_MAPPING_NAMES = OrderedDict([("alpha", "AlphaModel")])
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES = OrderedDict([("alpha", "AlphaForCausalLM")])
        MODEL_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, MODEL_MAPPING_NAMES)

        def get_values(model_mapping):
            return list(model_mapping.values())
    """,
    "src/transformers/models/alpha/configuration_alpha.py": """
        class AlphaTextConfig(PreTrainedConfig):
            pass

        class AlphaConfig(PreTrainedConfig):
            model_type = "alpha"
            sub_configs = {"text_config": AlphaTextConfig}
            sliding_window: int | None = None
    """,
    "src/transformers/models/alpha/modeling_alpha.py": """
        class AlphaPreTrainedModel(PreTrainedModel):
            config: AlphaConfig
            _supports_sdpa = True
            supports_gradient_checkpointing = True

        class AlphaModel(AlphaPreTrainedModel):
            def forward(self, input_ids=None, position_ids=None, inputs_embeds=None, **kwargs):
                pass

        class AlphaForCausalLM(AlphaPreTrainedModel, GenerationMixin):
            def forward(self, input_ids=None, position_ids=None, inputs_embeds=None, labels=None):
                pass
    """,
    # beta's classes inherit their forward from a shared base in another file
    "src/transformers/models/beta/configuration_beta.py": """
        class BetaConfig(PreTrainedConfig):
            model_type = "beta"
            sliding_window: int | None = 4096
    """,
    "src/transformers/models/beta/base_beta.py": "",
    "src/transformers/models/beta/modeling_beta.py": """
        from ..gamma.modeling_gamma import GammaPreTrainedModel

        class BetaPreTrainedModel(GammaPreTrainedModel):
            config_class = BetaConfig

        class BetaModel(BetaPreTrainedModel):
            supports_gradient_checkpointing = True

        class BetaForCausalLM(BetaPreTrainedModel):
            pass
    """,
    "src/transformers/models/gamma/modeling_gamma.py": """
        class GammaPreTrainedModel(PreTrainedModel):
            def forward(self, input_ids=None):
                pass
    """,
}


@pytest.fixture
def checkout(make_repo):
    files = {
        "tests/test_modeling_common.py": COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
        "tests/models/beta/test_modeling_beta.py": MODEL_TEST.format(name="Beta", bos=None),
    }
    root = make_repo(files)
    return write_tree(root, LIBRARY)


@pytest.mark.parametrize(
    ("test", "reason"),
    [
        ("test_sdpa", "BetaModel does not support SDPA"),  # a flag, inherited from PreTrainedModel
        (
            "test_gradient_checkpointing",
            "BetaForCausalLM does not support gradient checkpointing",
        ),  # in a loop
        ("test_inputs_embeds", "This model doesn't use `inputs_embeds`"),  # forward inherited across files
        ("test_sliding_window", "sliding window attention is not supported by this test"),  # config default
        ("test_without_bos", "bos_token_id is None"),  # the tester's value wins over the config's default
        ("test_in_mapping", "BetaConfig not in MODEL_MAPPING"),  # auto mapping keyed by config class
        ("test_decoder_only", "No decoder-only architecture available for this model."),
        ("test_name_list", "Won't fix: old model"),  # a literal list of names in the common file
        ("test_sub_configs", "No subconfigs so the test does not make sense"),  # composite configs
        ("test_helper", "Model does not support position_ids"),  # a skip in a helper the test calls
        ("test_conversions", "No conversion found for <class 'BetaModel'>"),  # conversion_mapping.py
    ],
)
def test_library_facts_decide_the_skip(checkout, scan, test, reason):
    results = scan(checkout)
    assert verdicts(results, test) == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}
    assert results[test]["reasons_skipped"] == [f"beta: {reason}"]
    assert results[test]["skips"][0]["kind"] == "runtime"


# Which attributes a configuration has is known only when its classes are followed up to the base
# configuration class (an attribute no class declares does not exist).
HASATTR_COMMON = """
import unittest


class ModelTesterMixin:
    def test_window_switch(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if not hasattr(config, "use_sliding_window"):
            self.skipTest(reason="no sliding window switch")
"""


@pytest.mark.parametrize("base", ["PreTrainedConfig", "PretrainedConfig"])
def test_the_base_configuration_ends_the_attributes_under_either_spelling(make_repo, scan, base):
    """Checkouts older than transformers 5 call the base configuration class ``PretrainedConfig``."""
    files = {
        "tests/test_modeling_common.py": HASATTR_COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
        "tests/models/beta/test_modeling_beta.py": MODEL_TEST.format(name="Beta", bos=None),
    }
    library = {path: text.replace("PreTrainedConfig", base) for path, text in LIBRARY.items()}
    alpha = "src/transformers/models/alpha/configuration_alpha.py"
    library[alpha] = library[alpha].replace(
        "sliding_window: int | None = None",
        "sliding_window: int | None = None\n            use_sliding_window: bool = True",
    )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_window_switch") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}


def test_a_skip_in_the_loop_ends_the_test_at_the_first_class(checkout, scan):
    """BetaModel supports gradient checkpointing, BetaForCausalLM does not: the test is skipped."""
    results = scan(checkout)
    assert results["test_gradient_checkpointing"]["models_skipped"] == ["beta"]


def test_a_bare_is_flaky_runs_no_body(checkout, scan):
    results = scan(checkout)
    assert verdicts(results, "test_flaky_bare") == {"ran": ["alpha", "beta"], "skipped": [], "undecided": []}
    assert verdicts(results, "test_flaky_called") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}


def test_environment_checks_in_the_body_never_make_a_model_skip(checkout, scan):
    results = scan(checkout)
    assert verdicts(results, "test_environment") == {"ran": ["alpha"], "skipped": ["beta"], "undecided": []}


def test_a_skip_after_an_undecidable_early_return_is_undecided(checkout, scan):
    results = scan(checkout)
    assert verdicts(results, "test_early_return") == {"ran": ["alpha"], "skipped": [], "undecided": ["beta"]}


def test_what_only_the_run_knows_is_undecided_with_its_condition(checkout, scan):
    results = scan(checkout)
    assert verdicts(results, "test_outputs") == {"ran": [], "skipped": [], "undecided": ["alpha", "beta"]}
    assert (
        "alpha: undecided: which outputs `outputs` holds is only known by running the model "
        "(if 'past_key_values' not in outputs: skip)" in (results["test_outputs"]["conditions"])
    )
    assert results["test_outputs"]["skipped_proportion"] == 0.0  # skipped / (ran + skipped), undecided apart


def test_without_library_sources_library_conditions_are_undecided(make_repo, scan, capsys):
    files = {
        "tests/test_modeling_common.py": COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
    }
    results = scan(make_repo(files))
    assert results["test_sdpa"]["models_undecided"] == ["alpha"]
    assert results["test_gradient_checkpointing"]["models_undecided"] == ["alpha"]
    err = capsys.readouterr().err
    assert err.count("no library sources") == 1


ENCODER_DECODER_COMMON = """
import unittest


class ModelTesterMixin:
    def test_decoder_only_here(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.is_encoder_decoder:
            self.skipTest(reason="This model is encoder-decoder")

    def test_needs_bos(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.bos_token_id is None:
            self.skipTest(reason="bos_token_id is None")
"""

# Configurations written before dataclass fields: an `__init__` hands its values to the base's.
OLD_STYLE_LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            config_class = None
    """,
    "src/transformers/configuration_utils.py": """
        class PretrainedConfig:
            def __init__(self, *, is_encoder_decoder: bool = False, bos_token_id=None, **kwargs):
                self.is_encoder_decoder = is_encoder_decoder
                self.bos_token_id = bos_token_id
    """,
    "src/transformers/models/alpha/configuration_alpha.py": """
        class AlphaConfig(PretrainedConfig):
            model_type = "alpha"

            def __init__(self, vocab_size=10, **kwargs):
                self.vocab_size = vocab_size
                super().__init__(**kwargs)
    """,
    "src/transformers/models/beta/configuration_beta.py": """
        class BetaConfig(PretrainedConfig):
            model_type = "beta"

            def __init__(self, vocab_size=10, is_encoder_decoder=True, **kwargs):
                self.vocab_size = vocab_size
                super().__init__(is_encoder_decoder=is_encoder_decoder, **kwargs)
    """,
    # gamma takes its special tokens from its decoder part, in a loop over their names (T5Gemma)
    "src/transformers/models/gamma/configuration_gamma.py": """
        class GammaConfig(PretrainedConfig):
            model_type = "gamma"

            def __init__(self, decoder=None, **kwargs):
                for key in ["bos_token_id", "pad_token_id"]:
                    if key not in kwargs:
                        kwargs[key] = getattr(decoder, key)
                super().__init__(**kwargs)
    """,
}
for _name in ("Alpha", "Beta", "Gamma"):
    OLD_STYLE_LIBRARY[f"src/transformers/models/{_name.lower()}/modeling_{_name.lower()}.py"] = f"""
        class {_name}Model(PreTrainedModel):
            config_class = {_name}Config

        class {_name}ForCausalLM(PreTrainedModel):
            config_class = {_name}Config
    """


def test_an_old_style_configuration_sets_what_it_hands_the_base_constructor(make_repo, scan):
    files = {
        "tests/test_modeling_common.py": ENCODER_DECODER_COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
        "tests/models/beta/test_modeling_beta.py": MODEL_TEST.format(name="Beta", bos=1),
        "tests/models/gamma/test_modeling_gamma.py": MODEL_TEST.format(name="Gamma", bos=1),
    }
    results = scan(write_tree(make_repo(files), OLD_STYLE_LIBRARY))
    assert verdicts(results, "test_decoder_only_here") == {
        "ran": ["alpha", "gamma"],
        "skipped": ["beta"],
        "undecided": [],
    }
    assert verdicts(results, "test_needs_bos")["ran"] == [
        "alpha",
        "beta",
        "gamma",
    ]  # the testers' bos_token_id


# A model test whose tester's get_config builds the configuration with the keywords given.
CONFIG_TESTER = """
import unittest
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def get_config(self):
        return {name}Config({keywords})

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{}}


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester()
"""


def test_a_keyword_an_old_style_configuration_sets_itself_is_left_to_the_run(make_repo, scan):
    """The base's default bos_token_id is None, unless the configuration sets the keyword it hands on."""
    files = {"tests/test_modeling_common.py": ENCODER_DECODER_COMMON}
    for name in ("Alpha", "Gamma"):
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = CONFIG_TESTER.format(
            name=name, keywords=""
        )
    results = scan(write_tree(make_repo(files), OLD_STYLE_LIBRARY))
    assert verdicts(results, "test_needs_bos") == {"ran": [], "skipped": ["alpha"], "undecided": ["gamma"]}


def test_an_old_style_composite_configuration_gives_its_part_the_default_model_type(make_repo, scan):
    """``text_config.get("model_type", "<type>")`` on the ``__init__`` parameter (before dataclass
    fields) chooses the part's class for a dict without a model type: delta's part declares
    ``use_cache``, epsilon's does not."""
    common = """
import unittest


class ModelTesterMixin:
    def test_part_caches(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if not hasattr(config.get_text_config(), "use_cache"):
            self.skipTest(reason="doesn't support caching")
"""
    composite = """
        class {name}TextConfig(PretrainedConfig):
            model_type = "{folder}_text"

            def __init__(self, {parameters}**kwargs):
                {body}
                super().__init__(**kwargs)

        class {name}Config(PretrainedConfig):
            model_type = "{folder}"
            sub_configs = {{"text_config": AutoConfig}}

            def __init__(self, text_config=None, **kwargs):
                if isinstance(text_config, dict):
                    text_config["model_type"] = text_config.get("model_type", "{folder}_text")
                    text_config = CONFIG_MAPPING[text_config["model_type"]](**text_config)
                self.text_config = text_config
                super().__init__(**kwargs)

        class {name}Model(PreTrainedModel):
            config_class = {name}Config
    """
    library = {
        "src/transformers/modeling_utils.py": OLD_STYLE_LIBRARY["src/transformers/modeling_utils.py"],
        "src/transformers/configuration_utils.py": """
            class PretrainedConfig:
                def __init__(self, **kwargs):
                    for key, value in kwargs.items():
                        setattr(self, key, value)

                def get_text_config(self, decoder=None, encoder=None):
                    pass
        """,
        "src/transformers/models/auto/configuration_auto.py": """
            CONFIG_MAPPING_NAMES = OrderedDict(
                [("delta_text", "DeltaTextConfig"), ("epsilon_text", "EpsilonTextConfig")]
            )

            class AutoConfig:
                pass
        """,
        "src/transformers/models/delta/modeling_delta.py": composite.format(
            name="Delta", folder="delta", parameters="use_cache=True, ", body="self.use_cache = use_cache"
        ),
        "src/transformers/models/epsilon/modeling_epsilon.py": composite.format(
            name="Epsilon", folder="epsilon", parameters="", body="pass"
        ),
    }
    files = {"tests/test_modeling_common.py": common}
    for name in ("Delta", "Epsilon"):
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = CONFIG_TESTER.format(
            name=name, keywords='text_config={"vocab_size": 99}'
        )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_part_caches") == {
        "ran": ["delta"],
        "skipped": ["epsilon"],
        "undecided": [],
    }


# transformers' test_flash_attn_2_can_compile_with_attention_mask_None_without_graph_break, as written
CLASS_NAME_COMMON = """
import unittest


class ModelTesterMixin:
    def test_compile_training(self):
        if not hasattr(self, "_torch_compile_train_cls"):
            self.skipTest(f"{self.__class__.__name__} doesn't have the attribute `_torch_compile_train_cls`.")
"""


def test_a_run_time_skip_reason_names_the_test_class_that_skips(make_repo, scan):
    files = {
        "tests/test_modeling_common.py": CLASS_NAME_COMMON,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1)
        + "    _torch_compile_train_cls = AlphaForCausalLM\n",
        "tests/models/beta/test_modeling_beta.py": MODEL_TEST.format(name="Beta", bos=None),
    }
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_compile_training") == {
        "ran": ["alpha"],
        "skipped": ["beta"],
        "undecided": [],
    }
    assert results["test_compile_training"]["reasons_skipped"] == [
        "beta: BetaModelTest doesn't have the attribute `_torch_compile_train_cls`."
    ]
