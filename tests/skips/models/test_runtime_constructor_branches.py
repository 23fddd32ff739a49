"""Module trees the constructors build, where a branch, a base class, a property or a mixin of the
library decides them, on a tiny fake checkout.

As in ``test_runtime_part_choices``: ``TextModel`` records its outputs, ``PlainModel`` does not, and
each pair of models differs only in which one the constructor builds:

- ``ash`` / ``elm``: ``if config.use_text: ... else: ...`` in the model's own ``__init__``, decided
  on the tester's configuration (``use_text=True`` / ``False``);
- ``birch`` / ``cedar``: the same branch, on ``self.config`` (``self.config = config``), in a model
  the instance builds from its configuration (``self.model = NestedInner(config)``);
- ``fig`` / ``yew``: layers deriving from a class imported from another package (a kernel's), whose
  constructor builds no model of the library;
- ``kiwi`` / ``lime``: a part a configuration property builds (``config.encoder_config``).

``test_text_model`` looks an attribute up on a backbone: ``oak`` builds none, and every class of
its MRO, the library's ``BackboneMixin`` included, is read, so the attribute is absent; ``pear``
builds one.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_part_choices import COMMON as PART_COMMON
from tests.skips.models.test_runtime_part_choices import LIBRARY as PART_LIBRARY

COMMON = (
    PART_COMMON
    + """
    def test_text_model(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(config)
            if getattr(model, "text_model", None) is None:
                self.skipTest("No text model.")
"""
)

MODEL_TEST = """
import unittest
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent):
        self.parent = parent

    def get_config(self):
        return {prefix}Config({keywords})

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{}}


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({prefix}Model,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

# (folder, name prefix of the configuration and the model classes, get_config keywords)
MODELS = [
    ("ash", "Branch", "use_text=True"),
    ("elm", "Branch", "use_text=False"),
    ("birch", "Nested", "use_text=True"),
    ("cedar", "Nested", "use_text=False"),
    ("fig", "KernelText", ""),
    ("yew", "KernelPlain", ""),
    ("kiwi", "EncodedText", ""),
    ("lime", "EncodedPlain", ""),
    ("oak", "OakBackbone", ""),
    ("pear", "PearBackbone", ""),
]

# the base classes, the conversions, the auto mappings and the text / plain models of test_runtime_part_choices
SHARED = (
    "conversion_mapping.py",
    "modeling_utils.py",
    "configuration_utils.py",
    "models/auto/",
    "models/text/",
)
LIBRARY = {
    **{
        path: text
        for path, text in PART_LIBRARY.items()
        if path.removeprefix("src/transformers/").startswith(SHARED)
    },
    "src/transformers/backbone_utils.py": """
        class BackboneMixin:
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.stage_names = self.config.stage_names
    """,
    "src/transformers/models/branch/modeling_branch.py": """
        class BranchConfig(PreTrainedConfig):
            model_type = "branch"
            use_text: bool = True

        class BranchModel(PreTrainedModel):
            config: BranchConfig

            def __init__(self, config):
                super().__init__(config)
                if config.use_text:
                    self.inner = TextModel(config)
                else:
                    self.inner = PlainModel(config)
    """,
    "src/transformers/models/nested/modeling_nested.py": """
        class NestedConfig(PreTrainedConfig):
            model_type = "nested"
            use_text: bool = True

        class NestedInner(PreTrainedModel):
            config: NestedConfig

            def __init__(self, config):
                super().__init__(config)
                self.config = config
                if self.config.use_text:
                    self.inner = TextModel(config)
                else:
                    self.inner = PlainModel(config)

        class NestedModel(PreTrainedModel):
            config: NestedConfig

            def __init__(self, config):
                super().__init__(config)
                self.model = NestedInner(config)
    """,
    "src/transformers/models/kernel/modeling_kernel.py": """
        from torch import nn
        from fla.layers import FusedBlock

        class KernelTextConfig(PreTrainedConfig):
            model_type = "kernel_text"

        class KernelPlainConfig(PreTrainedConfig):
            model_type = "kernel_plain"

        class KernelLayer(FusedBlock):
            def __init__(self, config):
                super().__init__()
                self.proj = nn.Linear(4, 4)

        class KernelTextModel(PreTrainedModel):
            config: KernelTextConfig
            _can_record_outputs = {"hidden_states": KernelLayer}

            def __init__(self, config):
                super().__init__(config)
                self.layer = KernelLayer(config)

        class KernelPlainModel(PreTrainedModel):
            config: KernelPlainConfig

            def __init__(self, config):
                super().__init__(config)
                self.layer = KernelLayer(config)
    """,
    "src/transformers/models/encoded/modeling_encoded.py": """
        class EncodedTextConfig(PreTrainedConfig):
            model_type = "encoded_text"

            @property
            def encoder_config(self):
                values = self.to_dict()
                return TextConfig(**values)

        class EncodedPlainConfig(PreTrainedConfig):
            model_type = "encoded_plain"

            @property
            def encoder_config(self):
                return PlainConfig(**self.to_dict())

        class EncodedTextModel(PreTrainedModel):
            config: EncodedTextConfig

            def __init__(self, config):
                super().__init__(config)
                self.encoder = AutoModel.from_config(config.encoder_config)

        class EncodedPlainModel(EncodedTextModel):
            config: EncodedPlainConfig
    """,
    "src/transformers/models/oak/modeling_oak.py": """
        from ...backbone_utils import BackboneMixin

        class OakBackboneConfig(PreTrainedConfig):
            model_type = "oak"

        class PearBackboneConfig(PreTrainedConfig):
            model_type = "pear"

        class OakBackboneModel(BackboneMixin, PreTrainedModel):
            config: OakBackboneConfig

            def __init__(self, config):
                super().__init__(config)
                self.proj = nn.Linear(4, 4)

        class PearBackboneModel(BackboneMixin, PreTrainedModel):
            config: PearBackboneConfig

            def __init__(self, config):
                super().__init__(config)
                self.text_model = TextModel(config)
    """,
}


@pytest.fixture
def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for folder, prefix, keywords in MODELS:
        files[f"tests/models/{folder}/test_modeling_{folder}.py"] = MODEL_TEST.format(
            name=folder.title(), prefix=prefix, keywords=keywords
        )
    return write_tree(make_repo(files), LIBRARY)


def test_the_constructors_branches_bases_and_properties_decide_the_tree(checkout, scan):
    found = verdicts(scan(checkout), "test_capture_outputs")
    assert {folder: verdict for verdict, folders in found.items() for folder in folders} == {
        "ash": "ran",
        "elm": "skipped",
        "birch": "ran",
        "cedar": "skipped",
        "fig": "ran",
        "yew": "skipped",
        "kiwi": "ran",
        "lime": "skipped",
        "oak": "skipped",  # its own class records nothing, and it builds no model
        "pear": "ran",
    }


def test_an_attribute_no_class_of_a_backbone_sets_is_absent(checkout, scan):
    found = verdicts(scan(checkout), "test_text_model")
    assert "oak" in found["skipped"] and "pear" in found["ran"]
