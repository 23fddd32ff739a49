"""``"past_key_values" in outputs`` for a model whose cache is kept by a model it holds, read along
its known module tree: the ``use_cache`` passed when every model on the way hands it on, else the
values they could read, which must agree."""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_delegated_cache import GENERATION  # test_cache_returned
from tests.skips.models.test_runtime_delegated_cache import LIBRARY as DELEGATED

MODEL_TEST = """
import unittest
from transformers import VlmConfig, VlmModel
from ...generation.test_utils import GenerationTesterMixin


class VlmModelTester:
    def __init__(self, parent):
        self.parent = parent

    def get_config(self):
        return VlmConfig(use_cache={use_cache}, text_config={text_config})

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {inputs}


class VlmModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = (VlmModel,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = VlmModelTester(self)
"""

# the base classes, the shared output class and the text part's configuration are delegated_cache's
LIBRARY = {
    **{path: text for path, text in DELEGATED.items() if "/vlm/" not in path and "/auto/" not in path},
    "src/transformers/models/text/modeling_text.py": """
        from ...modeling_outputs import BaseModelOutputWithPast

        class TextAttention(nn.Module):
            def forward(self, hidden_states, past_key_values=None):
                past_key_values = getattr(self, "past_key_values", past_key_values)
                return hidden_states

        class TextModel(PreTrainedModel):
            config: TextConfig

            def __init__(self, config):
                super().__init__(config)
                self.attention = TextAttention()

            def forward(self, input_ids=None, past_key_values=None, use_cache=None) -> BaseModelOutputWithPast:
                use_cache = use_cache if use_cache is not None else self.config.use_cache
                if use_cache and past_key_values is None:
                    past_key_values = DynamicCache(config=self.config)
                return BaseModelOutputWithPast(past_key_values=past_key_values)
    """,
    "src/transformers/models/vlm/configuration_vlm.py": """
        class VlmConfig(PreTrainedConfig):
            model_type = "vlm"
            sub_configs = {"text_config": TextConfig}
            use_cache: bool = True
    """,
    "src/transformers/models/vlm/modeling_vlm.py": """
        from ...modeling_outputs import BaseModelOutputWithPast
        from ..text.modeling_text import TextModel

        class VlmModel(PreTrainedModel):
            config: VlmConfig

            def __init__(self, config):
                super().__init__(config)
                self.language_model = TextModel(config.text_config)

            def forward(self, input_ids=None, past_key_values=None, use_cache=None) -> BaseModelOutputWithPast:
                outputs = self.language_model(input_ids, past_key_values=past_key_values, use_cache=use_cache)
                return BaseModelOutputWithPast(past_key_values=outputs.past_key_values)
    """,
}


def test_the_cache_of_a_held_language_model_follows_the_use_cache_that_reaches_it(make_repo, scan):
    """alpha passes use_cache=True, which VlmModel hands on: ran, although its configuration says
    False; beta passes False: skipped. Without a value passed, VlmModel (which never reads its
    configuration's use_cache) passes None on and the text part's configuration decides: True for
    gamma and delta (ran), False for epsilon (skipped). The attention layer's
    ``getattr(self, "past_key_values", ...)`` reads a cache, it builds none."""
    files = {"tests/generation/test_utils.py": GENERATION}
    ids = '"input_ids": ids_tensor([2, 7], 99)'
    testers = {
        "alpha": ("False", "{}", f'{{{ids}, "use_cache": True}}'),
        "beta": ("True", "{}", f'{{{ids}, "use_cache": False}}'),
        "gamma": ("False", "{}", f"{{{ids}}}"),
        "delta": ("True", "{}", f"{{{ids}}}"),
        "epsilon": ("False", '{"use_cache": False}', f"{{{ids}}}"),
    }
    for name, (use_cache, text_config, inputs) in testers.items():
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            use_cache=use_cache, text_config=text_config, inputs=inputs
        )
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_cache_returned") == {
        "ran": ["alpha", "delta", "gamma"],
        "skipped": ["beta", "epsilon"],
        "undecided": [],
    }


def test_values_a_composite_may_read_from_its_configuration_must_agree(make_repo, scan):
    """A VlmModel that fills a None use_cache from its own configuration: eta's says False and its
    text part True (undecided), theta's both say True (ran)."""
    library = dict(LIBRARY)
    library["src/transformers/models/vlm/modeling_vlm.py"] = LIBRARY[
        "src/transformers/models/vlm/modeling_vlm.py"
    ].replace(
        "outputs = self.language_model(",
        "use_cache = use_cache if use_cache is not None else self.config.use_cache\n"
        "                outputs = self.language_model(",
    )
    files = {"tests/generation/test_utils.py": GENERATION}
    for name, use_cache in (("eta", "False"), ("theta", "True")):
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            use_cache=use_cache, text_config="{}", inputs='{"input_ids": ids_tensor([2, 7], 99)}'
        )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_cache_returned") == {"ran": ["theta"], "skipped": [], "undecided": ["eta"]}


def test_a_literal_use_cache_handed_on_leaves_the_cache_to_the_run(make_repo, scan):
    """A model on the way that passes its own ``use_cache=True`` is not followed: undecided, where
    the same tester with the model handing on its argument is decided."""
    library = dict(LIBRARY)
    library["src/transformers/models/vlm/modeling_vlm.py"] = LIBRARY[
        "src/transformers/models/vlm/modeling_vlm.py"
    ].replace("use_cache=use_cache)", "use_cache=True)")
    files = {
        "tests/generation/test_utils.py": GENERATION,
        "tests/models/zeta/test_modeling_zeta.py": MODEL_TEST.format(
            use_cache="False",
            text_config="{}",
            inputs='{"input_ids": ids_tensor([2, 7], 99), "use_cache": False}',
        ),
    }
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_cache_returned") == {"ran": [], "skipped": [], "undecided": ["zeta"]}


def test_a_layers_own_use_cache_and_a_checkpointing_branch_leave_the_cache_to_use_cache(make_repo, scan):
    """A layer that sets its local ``use_cache`` (OLMo-Hybrid's ``use_cache = cache_params is not
    None``) and ``use_cache = False`` under ``self.is_gradient_checkpointing and self.training``
    (Dia) change nothing by default: iota passes True (ran), kappa False (skipped)."""
    library = dict(LIBRARY)
    library["src/transformers/models/text/modeling_text.py"] = (
        LIBRARY["src/transformers/models/text/modeling_text.py"]
        .replace(
            'past_key_values = getattr(self, "past_key_values", past_key_values)',
            "use_cache = past_key_values is not None",
        )
        .replace(
            "if use_cache and past_key_values is None:",
            "if self.is_gradient_checkpointing and self.training:\n"
            "                    use_cache = False\n"
            "                if use_cache and past_key_values is None:",
        )
    )
    files = {"tests/generation/test_utils.py": GENERATION}
    for name, use_cache in (("iota", "True"), ("kappa", "False")):
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            use_cache="True",
            text_config="{}",
            inputs=f'{{"input_ids": ids_tensor([2, 7], 99), "use_cache": {use_cache}}}',
        )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_cache_returned") == {
        "ran": ["iota"],
        "skipped": ["kappa"],
        "undecided": [],
    }
