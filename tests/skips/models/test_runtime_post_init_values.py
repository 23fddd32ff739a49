"""Run-time skips on a value the configuration's ``__post_init__`` computes.

Qwen2's ``self.sliding_window = self.sliding_window if self.use_sliding_window else None`` and
BLIP-2's ``kwargs["is_encoder_decoder"] = self.text_config.is_encoder_decoder`` are computed from
what the tester passes; each has a model that must skip and one that must run. A write under a
branch stays undecided.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.fixture_sources import PRETRAINED_MODEL, config_tester, generation_test_class

GENERATION = """
class GenerationTesterMixin:
    model_tester = None

    def test_sliding_window(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if getattr(config, "sliding_window", 0) is not None and getattr(config, "sliding_window", 0) > 0:
            self.skipTest(reason="sliding window")

    def test_encoder_decoder(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.is_encoder_decoder:
            self.skipTest(reason="encoder-decoder")
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": PRETRAINED_MODEL,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: ClassVar[dict] = {}
            is_encoder_decoder: bool = False

            def __post_init__(self, **kwargs):
                for key, value in kwargs.items():
                    setattr(self, key, value)
    """,
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("part", "PartConfig")])

        class AutoConfig:
            pass
    """,
    "src/transformers/models/part/configuration_part.py": """
        class PartConfig(PreTrainedConfig):
            model_type = "part"
            hidden_size: int = 8
    """,
}

WINDOW = """
    use_sliding_window: bool = False
    sliding_window: int | None = 4096

    def __post_init__(self, **kwargs):
        {guard}self.sliding_window = self.sliding_window if self.use_sliding_window else None
        super().__post_init__(**kwargs)
"""
COMPOSITE = """
    sub_configs = {"text_config": AutoConfig}
    text_config: dict | None = None

    def __post_init__(self, **kwargs):
        if isinstance(self.text_config, dict):
            self.text_config = CONFIG_MAPPING["part"](**self.text_config)
        kwargs["is_encoder_decoder"] = self.text_config.is_encoder_decoder
        super().__post_init__(**kwargs)
"""
ARITHMETIC = """
    use_sliding_window: bool = False
    sliding_window: int | None = 4096

    def __post_init__(self, **kwargs):
        self.sliding_window = self.sliding_window // 2 if self.use_sliding_window is not None else -1
        super().__post_init__(**kwargs)
"""
INHERITED = """
    sliding_window: int | None = 4096

    def __post_init__(self, **kwargs):
        self.sliding_window = super().window_size()
        super().__post_init__(**kwargs)
"""
# model -> (the configuration's body, what the tester passes)
CASES = {
    "alpha": (WINDOW.format(guard=""), "use_sliding_window=True"),
    "beta": (WINDOW.format(guard=""), "hidden_size=self.hidden_size"),
    # the write sits under a branch: left to the run
    "gamma": (WINDOW.format(guard="if self.hidden_size:\n            "), "hidden_size=self.hidden_size"),
    # the part the tester passes is an object: its literal keyword decides, the other stays unknown
    "delta": (COMPOSITE, "text_config=PartConfig(is_encoder_decoder=True, hidden_size=self.hidden_size)"),
    "epsilon": (COMPOSITE, "text_config=PartConfig(is_encoder_decoder=False, hidden_size=self.hidden_size)"),
    # Python's operators on the values: 4096 // 2, and -1
    "zeta": (ARITHMETIC, "hidden_size=self.hidden_size"),
    "eta": (ARITHMETIC, "use_sliding_window=None"),
    # a method the base class runs: left to the run
    "theta": (INHERITED, "hidden_size=self.hidden_size"),
}


@pytest.fixture
def results(make_repo, scan):
    files, library = {"tests/generation/test_utils.py": GENERATION}, dict(LIBRARY)
    for model, (body, passed) in CASES.items():
        title = model.title()
        files[f"tests/models/{model}/test_modeling_{model}.py"] = config_tester(
            title, passed
        ) + generation_test_class(title)
        library[f"src/transformers/models/{model}/configuration_{model}.py"] = (
            f'class {title}Config(PreTrainedConfig):\n    model_type = "{model}"\n{body}'
        )
        library[f"src/transformers/models/{model}/modeling_{model}.py"] = (
            f"class {title}Model(PreTrainedModel):\n    config: {title}Config\n"
        )
    return scan(write_tree(make_repo(files), library))


def test_a_value_post_init_computes_from_the_passed_ones_decides_the_skip(results):
    found = verdicts(results, "test_sliding_window")
    assert "alpha" in found["skipped"] and "beta" in found["ran"]
    assert "gamma" in found["undecided"]


def test_a_value_from_a_method_of_the_base_is_left_to_the_run(results):
    assert "theta" in verdicts(results, "test_sliding_window")["undecided"]


def test_operators_on_the_values_are_computed(results):
    found = verdicts(results, "test_sliding_window")
    assert "zeta" in found["skipped"] and "eta" in found["ran"]


def test_a_keyword_post_init_hands_to_the_base_class_is_read_from_the_part(results):
    found = verdicts(results, "test_encoder_decoder")
    assert "delta" in found["skipped"] and "epsilon" in found["ran"]
