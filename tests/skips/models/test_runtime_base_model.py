"""``model.base_model`` of a loaded instance and the parts it holds (``test_sdpa_can_dispatch_composite_models``).

The library is the one of the instance-attribute tests plus ``duo``, whose base model (the attribute
``base_model_prefix`` names) holds a vision tower and a language model, and ``solo``, which holds
both itself and has no attribute of its prefix's name, so its base model is the instance.
"""

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_instance_attributes import LIBRARY, MODEL_TEST

COMMON = """
import unittest


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()

    def test_composite_dispatch(self):
        for model_class in self.all_model_classes:
            config, _ = self.model_tester.prepare_config_and_inputs_for_common()
            model = model_class(config)
            model.save_pretrained("checkpoint")
            loaded = model_class.from_pretrained("checkpoint")
            loaded = loaded.base_model
            vision_names = {"visual", "vision_tower"}
            language_names = {"language_model", "model"}
            vision = [name for name in vision_names if hasattr(loaded, name)]
            vision = vision[0] if len(vision) > 0 else None
            language = [name for name in language_names if hasattr(loaded, name)]
            language = language[0] if len(language) > 0 else None
            if language is None or vision is None:
                self.skipTest(reason="no vision and language parts")
"""

PARTS = {
    "src/transformers/models/duo/modeling_duo.py": """
        from torch import nn

        class DuoConfig(PreTrainedConfig):
            model_type = "duo"

        class DuoInnerModel(PreTrainedModel):
            config: DuoConfig

            def __init__(self, config):
                super().__init__(config)
                self.vision_tower = nn.Linear(4, 4)
                self.language_model = FlatInnerModel(config)

        class DuoModel(PreTrainedModel):
            config: DuoConfig
            base_model_prefix = "model"

            def __init__(self, config):
                super().__init__(config)
                self.model = DuoInnerModel(config)
                self.lm_head = nn.Linear(4, 10)
    """,
    "src/transformers/models/solo/modeling_solo.py": """
        from torch import nn

        class SoloConfig(PreTrainedConfig):
            model_type = "solo"

        class SoloModel(PreTrainedModel):
            config: SoloConfig
            base_model_prefix = "model"

            def __init__(self, config):
                super().__init__(config)
                self.visual = nn.Linear(4, 4)
                self.language_model = FlatInnerModel(config)
    """,
}


def test_the_parts_of_the_base_model_decide_the_composite_skip(make_repo, scan):
    """duo's base model (its `model`) holds a vision tower and a language model, solo's base model
    is itself (it has no `model`) and holds both: ran; rope's base model is itself and holds only a
    `model`, branchy's is its `backbone`, which holds neither part: skipped; gated may set any
    attribute (setattr under a computed name): undecided."""
    files = {"tests/test_modeling_common.py": COMMON}
    for name in ("Duo", "Solo", "Rope", "Branchy", "Gated"):
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = MODEL_TEST.format(name=name)
    checkout = write_tree(make_repo(files), {**LIBRARY, **PARTS})
    assert verdicts(scan(checkout), "test_composite_dispatch") == {
        "ran": ["duo", "solo"],
        "skipped": ["branchy", "rope"],
        "undecided": ["gated"],
    }
