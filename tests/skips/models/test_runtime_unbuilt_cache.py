"""A modeling file whose forwards never build a cache (hybrid models such as Bamba build theirs in
``prepare_inputs_for_generation``): ``model(**inputs)`` without a cache returns none."""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_cache_switches import LIBRARY as BASE
from tests.skips.models.test_runtime_delegated_cache import GENERATION  # test_cache_returned

MODEL_TEST = """
import unittest
from transformers import {name}Config, {name}ForCausalLM
from ...generation.test_utils import GenerationTesterMixin


class {name}ModelTester:
    def __init__(self, parent):
        self.parent = parent

    def get_config(self):
        return {name}Config()

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{"input_ids": ids_tensor([2, 7], 99), "use_cache": True}}


class {name}ModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = ({name}ForCausalLM,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

MODELING = """
{imports}
from ...modeling_outputs import CausalLMOutputWithPast

class {name}Config(PreTrainedConfig):
    model_type = "{model_type}"

class {name}Cache:
    def __init__(self, config):
        self.layers = DynamicCache(config=config)

class {name}ForCausalLM(PreTrainedModel):
    config: {name}Config

    def __init__(self, config):
        super().__init__(config)
        self.layer = nn.Linear(2, 2)

    def forward(self, input_ids=None, past_key_values=None, use_cache=None) -> CausalLMOutputWithPast:
        if use_cache and past_key_values is None:
            logger.warning_once("no cache was given, so none is returned")
        {body}
        return CausalLMOutputWithPast(past_key_values=past_key_values)

    def prepare_inputs_for_generation(self, input_ids, past_key_values=None):
        if past_key_values is None:
            past_key_values = {name}Cache(self.config)
        return {{"input_ids": input_ids, "past_key_values": past_key_values}}
"""

# hyb builds its cache only for generation, as does activated, which imports from the package's
# activations (no model there); legacy rebuilds one from a tuple in its forward, tupled grows a
# tuple of the layers' key/value pairs (as models did before Cache classes); borrowed and absolute
# take a layer from another model's file, whose forward is not read
MODELS = {
    "hyb": ("", "hidden = self.layer(input_ids)"),
    "activated": ("from transformers.activations import ACT2FN", "hidden = self.layer(input_ids)"),
    "legacy": ("", "past_key_values = DynamicCache.from_legacy_cache(past_key_values)"),
    "tupled": ("", "next_decoder_cache = ()\n        next_decoder_cache += (self.layer(input_ids),)"),
    "borrowed": ("from ..hyb.modeling_hyb import HybCache", "hidden = self.layer(input_ids)"),
    "absolute": (
        "from transformers.models.hyb.modeling_hyb import HybCache",
        "hidden = self.layer(input_ids)",
    ),
}


def test_a_cache_built_only_for_generation_is_not_returned(make_repo, scan):
    """hyb's and activated's forwards build no cache and the test passes none: skipped; legacy's
    forward builds one (DynamicCache.from_legacy_cache), tupled's a tuple, borrowed and absolute
    import from another model's file: undecided."""
    files = {"tests/generation/test_utils.py": GENERATION}
    library = dict(BASE)
    for model_type, (imports, body) in MODELS.items():
        name = model_type.capitalize()
        files[f"tests/models/{model_type}/test_modeling_{model_type}.py"] = MODEL_TEST.format(name=name)
        library[f"src/transformers/models/{model_type}/modeling_{model_type}.py"] = MODELING.format(
            name=name, model_type=model_type, imports=imports, body=body
        )
    results = scan(write_tree(make_repo(files), library))
    assert verdicts(results, "test_cache_returned") == {
        "ran": [],
        "skipped": ["activated", "hyb"],
        "undecided": ["absolute", "borrowed", "legacy", "tupled"],
    }
