"""``use_cache = False`` written under ``if`` tests in a modeling file (BERT's base model unless the
configuration is a decoder, its head when labels are given), decided on the call."""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_delegated_cache import GENERATION  # test_cache_returned

MODEL_TEST = """
import unittest
from transformers import EncConfig, {model_class}
from ...generation.test_utils import GenerationTesterMixin


class EncModelTester:
    def __init__(self, parent):
        self.parent = parent

    def get_config(self):
        return EncConfig(is_decoder={is_decoder})

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {inputs}


class EncModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = ({model_class},) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = EncModelTester(self)
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            config_class = None

            def __init__(self, config):
                super().__init__()
                self.config = config
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: ClassVar[dict] = {}
            is_decoder: bool = False
            use_cache: bool = True

            def get_text_config(self, decoder=None, encoder=None):
                pass
    """,
    "src/transformers/modeling_outputs.py": """
        class CausalLMOutputWithPast(ModelOutput):
            logits: torch.FloatTensor | None = None
            past_key_values: Cache | None = None
    """,
    "src/transformers/models/enc/configuration_enc.py": """
        class EncConfig(PreTrainedConfig):
            model_type = "enc"
    """,
    "src/transformers/models/enc/modeling_enc.py": """
        from ...modeling_outputs import CausalLMOutputWithPast

        class EncModel(PreTrainedModel):
            config: EncConfig

            def __init__(self, config):
                super().__init__(config)
                self.layer = nn.Linear(2, 2)

            def forward(self, input_ids=None, past_key_values=None, use_cache=None) -> CausalLMOutputWithPast:
                if self.config.is_decoder:
                    use_cache = use_cache if use_cache is not None else self.config.use_cache
                else:
                    use_cache = False
                if use_cache and past_key_values is None:
                    past_key_values = (
                        EncoderDecoderCache(DynamicCache(), DynamicCache())
                        if self.config.is_encoder_decoder
                        else DynamicCache(config=self.config)
                    )
                return CausalLMOutputWithPast(past_key_values=past_key_values)

        class EncForCausalLM(PreTrainedModel):
            config: EncConfig

            def __init__(self, config):
                super().__init__(config)
                self.enc = EncModel(config)

            def forward(
                self, input_ids=None, past_key_values=None, use_cache=None, labels=None
            ) -> CausalLMOutputWithPast:
                if labels is not None:
                    use_cache = False
                outputs = self.enc(input_ids, past_key_values=past_key_values, use_cache=use_cache)
                return CausalLMOutputWithPast(past_key_values=outputs.past_key_values)

        class EncForQuestionAnswering(PreTrainedModel):
            config: EncConfig

            def __init__(self, config):
                super().__init__(config)
                self.enc = EncModel(config)

            def forward(self, input_ids=None, use_cache=None, start_positions=None) -> CausalLMOutputWithPast:
                if start_positions is not None:
                    use_cache = False
                return self.enc(input_ids, use_cache=use_cache)

        class EncEncoderModel(PreTrainedModel):
            config: EncConfig

            def __init__(self, config):
                super().__init__(config)
                self.enc = EncModel(config)

            def forward(self, input_ids=None, use_cache=None) -> CausalLMOutputWithPast:
                use_cache = False
                return self.enc(input_ids, use_cache=use_cache)
    """,
}


def test_a_cache_turned_off_under_a_test_of_the_configuration_or_the_call(make_repo, scan):
    """alpha is a decoder called without labels: ran; beta is no decoder, gamma passes labels: skipped;
    delta's labels may be None: undecided; epsilon's encoder-only model always turns it off: skipped.
    The switches of the question-answering head and the encoder-only model are not on the causal
    model's path (its module tree is known), so they decide nothing there."""
    files = {"tests/generation/test_utils.py": GENERATION}
    testers = {
        "alpha": ("True", '{"input_ids": ids_tensor([2, 7], 99)}'),  # a decoder: the cache comes back
        "beta": ("False", '{"input_ids": ids_tensor([2, 7], 99)}'),  # not a decoder: turned off
        "gamma": ("True", '{"input_ids": ids_tensor([2, 7], 99), "labels": ids_tensor([2, 7], 99)}'),
        "delta": ("True", '{"input_ids": ids_tensor([2, 7], 99), "labels": self.labels}'),  # maybe None
    }
    for name, (is_decoder, inputs) in testers.items():
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            is_decoder=is_decoder, inputs=inputs, model_class="EncForCausalLM"
        )
    files["tests/models/epsilon/test_modeling_epsilon.py"] = MODEL_TEST.format(  # always off
        is_decoder="True", inputs='{"input_ids": ids_tensor([2, 7], 99)}', model_class="EncEncoderModel"
    )
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_cache_returned") == {
        "ran": ["alpha"],
        "skipped": ["beta", "epsilon", "gamma"],
        "undecided": ["delta"],
    }


def test_use_cache_false_returns_no_cache_whatever_a_switch_decides(make_repo, scan):
    """A switch only turns the cache off: zeta passes use_cache=False, so whether its labels are
    None does not matter (skipped); eta passes True with the same labels: undecided; theta passes
    True without labels: ran."""
    files = {"tests/generation/test_utils.py": GENERATION}
    maybe_labels = '"labels": self.labels'
    testers = {
        "zeta": f'{{"input_ids": ids_tensor([2, 7], 99), {maybe_labels}, "use_cache": False}}',
        "eta": f'{{"input_ids": ids_tensor([2, 7], 99), {maybe_labels}, "use_cache": True}}',
        "theta": '{"input_ids": ids_tensor([2, 7], 99), "use_cache": True}',
    }
    for name, inputs in testers.items():
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            is_decoder="True", inputs=inputs, model_class="EncForCausalLM"
        )
    results = scan(write_tree(make_repo(files), LIBRARY))
    assert verdicts(results, "test_cache_returned") == {
        "ran": ["theta"],
        "skipped": ["zeta"],
        "undecided": ["eta"],
    }
