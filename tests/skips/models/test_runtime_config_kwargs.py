"""Run-time skips on a keyword the configuration class does not declare.

The base configuration's ``__post_init__`` sets every keyword left in ``kwargs`` on the instance,
so ``AlphaConfig(bos_token_id=1)`` has ``bos_token_id == 1`` though no field declares it (T5's
tester). Alpha must run, beta (passing None) must skip; gamma's ``__post_init__`` pops the keyword
and delta's is a generation parameter the base pops: both stay undecided.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.fixture_sources import PRETRAINED_MODEL, config_tester, generation_test_class

GENERATION = """
class GenerationTesterMixin:
    model_tester = None

    def test_bos(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.{name} is None:
            self.skipTest(reason="no value")
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": PRETRAINED_MODEL,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            is_decoder: bool = False

            def __post_init__(self, **kwargs):
                kwargs.pop("torch_dtype", None)
                for parameter_name in GenerationConfig._get_default_generation_params().keys():
                    kwargs.pop(parameter_name, None)
                for key, value in kwargs.items():
                    setattr(self, key, value)
    """,
    "src/transformers/generation/configuration_utils.py": """
        class GenerationConfig:
            @staticmethod
            def _get_default_generation_params():
                return {"max_length": 20, "forced_bos_token_id": None}
    """,
}

POPPING = """
    def __post_init__(self, **kwargs):
        kwargs.pop("bos_token_id", None)
        super().__post_init__(**kwargs)
"""
HANDING_ON = """
    def __post_init__(self, **kwargs):
        self.head_dim = self.hidden_size // 2
        super().__post_init__(**kwargs)
"""


def _model(name: str, post_init: str) -> dict[str, str]:
    title = name.title()
    return {
        f"src/transformers/models/{name}/configuration_{name}.py": f"""
class {title}Config(PreTrainedConfig):
    model_type = "{name}"
    hidden_size: int = 8
{post_init}""",
        f"src/transformers/models/{name}/modeling_{name}.py": f"""
class {title}Model(PreTrainedModel):
    config: {title}Config
""",
    }


@pytest.fixture
def results(make_repo, scan):
    cases = {  # model -> (keyword, value passed, the configuration's __post_init__)
        "alpha": ("bos_token_id", "1", HANDING_ON),
        "beta": ("bos_token_id", "None", ""),
        "gamma": ("bos_token_id", "1", POPPING),
        "delta": ("forced_bos_token_id", "1", ""),
    }
    files, library = {}, dict(LIBRARY)
    for model, (name, value, post_init) in cases.items():
        files[f"tests/models/{model}/test_modeling_{model}.py"] = config_tester(
            model.title(), f"hidden_size=4, {name}={value}"
        ) + generation_test_class(model.title())
        library.update(_model(model, post_init))
    # one common test per keyword read: `config.bos_token_id` and `config.forced_bos_token_id`
    common = GENERATION.format(name="bos_token_id") + GENERATION.format(name="forced_bos_token_id").replace(
        "class GenerationTesterMixin:\n    model_tester = None\n\n    def test_bos", "    def test_forced_bos"
    )
    files["tests/generation/test_utils.py"] = common
    return scan(write_tree(make_repo(files), library))


def test_a_keyword_the_class_does_not_declare_is_the_attribute(results):
    found = verdicts(results, "test_bos")
    assert "alpha" in found["ran"] and "beta" in found["skipped"]
    assert "gamma" in found["undecided"]  # its __post_init__ pops the keyword


def test_a_generation_parameter_the_base_pops_is_left_to_the_run(results):
    assert "delta" in verdicts(results, "test_forced_bos")["undecided"]
