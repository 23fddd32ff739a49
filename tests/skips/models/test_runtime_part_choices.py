"""Run-time skips on the models an instance holds when the tester's dicts choose the parts' classes,
on a tiny fake checkout.

``TextModel`` records its outputs, ``PlainModel`` does not: a model whose chosen part is the text
model runs ``test_capture_outputs``, one whose part is the plain model skips it. Each pair of
models below differs only in that choice, made through one mechanism:

- ``opal`` / ``onyx``: a part declared as the base configuration class (``PreTrainedConfig``);
- ``pine`` / ``palm``: a dict written with values only the run knows (``self.hidden_size``);
- ``rose`` / ``rue``: ``XConfig(...).to_dict()``, whose model type ``__post_init__`` forces
  (``reed`` does not force it: undecided);
- ``nest`` / ``nook``: the part of a part (``vlm_config`` holding ``text_config``);
- ``sage`` / ``sorrel``: classes written in another file of the model's folder (``vision.py``);
- ``lark`` / ``loom``: configurations ``get_config`` builds into local names, the part's part
  passed by a name bound before it (``text = TextConfig(...)``, ``vlm = VlmConfig(text_config=text)``).

``sigma`` compares the loop's class with a model its test file imports (``model_class ==
SigmaModel``) and skips; ``sigmahead``, whose classes do not include it, runs.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_module_tree import COMMON as MODULE_TREE_COMMON

# the module-tree tests (test_capture_outputs among them), and one that runs each model class
COMMON = (
    MODULE_TREE_COMMON
    + """
    def test_training(self):
        for model_class in self.all_model_classes:
            run(model_class)
"""
)
MODEL_TEST = """
import unittest
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent, hidden_size=8):
        self.parent = parent
        self.hidden_size = hidden_size
        {tester}

    def get_config(self):
        return {config}({keywords})

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{}}


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({model},) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

# (folder, name prefix of the configuration and the model classes, tester line, get_config keywords)
MODELS = [
    ("opal", "Outer", 'self.vlm_config = {"model_type": "text"}', "vlm_config=self.vlm_config"),
    ("onyx", "Outer", 'self.vlm_config = {"model_type": "plain"}', "vlm_config=self.vlm_config"),
    ("pine", "AutoPart", 'self.part = {"model_type": "text", "size": self.hidden_size}', "part=self.part"),
    ("palm", "AutoPart", 'self.part = {"model_type": "plain", "size": self.hidden_size}', "part=self.part"),
    ("rose", "ForcedText", "self.part = TextConfig(size=self.hidden_size)", "part=self.part.to_dict()"),
    ("rue", "ForcedPlain", "self.part = TextConfig(size=self.hidden_size)", "part=self.part.to_dict()"),
    ("reed", "AutoPart", "self.part = TextConfig(size=self.hidden_size)", "part=self.part.to_dict()"),
    (
        "nest",
        "Outer",
        'self.text = {"model_type": "text"}\n        self.vlm = {"model_type": "vlm", "text_config": self.text}',
        "vlm_config=self.vlm",
    ),
    (
        "nook",
        "Outer",
        'self.text = {"model_type": "plain"}\n        self.vlm = {"model_type": "vlm", "text_config": self.text}',
        "vlm_config=self.vlm",
    ),
    ("sage", "Sage", "pass", ""),
    ("sorrel", "Sorrel", "pass", ""),
]

# the parts built into local names of get_config, the inner one passed to the outer one by name
LOCAL_PARTS_TEST = """
import unittest
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent):
        self.parent = parent
        self.hidden_size = 8

    def get_config(self):
        text = {text}
        vlm = VlmConfig(text_config=text)
        return OuterConfig(vlm_config=vlm)

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{}}


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (OuterModel,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

# `model_class == SigmaModel` in an override of the model's own test file
SIGMA_TEST = """
import unittest
from transformers import SigmaConfig
from ...test_modeling_common import ModelTesterMixin

if is_torch_available():
    from transformers import SigmaModel, SigmaHeadModel


class SigmaModelTester:
    def __init__(self, parent):
        self.parent = parent

    def get_config(self):
        return SigmaConfig()

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {}


class SigmaModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (SigmaModel, SigmaHeadModel) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = SigmaModelTester(self)

    def test_training(self):
        for model_class in self.all_model_classes:
            if model_class == SigmaModel:
                self.skipTest(reason="SigmaModel does not support training")
"""

LIBRARY = {
    # what the common tests import from it; no model has weight conversions
    "src/transformers/conversion_mapping.py": """
        def _build_checkpoint_conversion_mapping():
            return {}

        def get_model_conversion_mapping(model, key_mapping=None, hf_quantizer=None, add_legacy=True):
            return []
    """,
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            _can_record_outputs = None

            def __init__(self, config):
                super().__init__()
                self.config = config
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: ClassVar[dict] = {}
    """,
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict(
            [("text", "TextConfig"), ("plain", "PlainConfig"), ("vlm", "VlmConfig")]
        )

        class AutoConfig:
            pass
    """,
    "src/transformers/models/auto/modeling_auto.py": """
        MODEL_MAPPING_NAMES = OrderedDict([("text", "TextModel"), ("plain", "PlainModel"), ("vlm", "VlmModel")])
        MODEL_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, MODEL_MAPPING_NAMES)

        class AutoModel(_BaseAutoModelClass):
            _model_mapping = MODEL_MAPPING
    """,
    "src/transformers/models/text/modeling_text.py": """
        class TextConfig(PreTrainedConfig):
            model_type = "text"
            size: int = 4

        class PlainConfig(PreTrainedConfig):
            model_type = "plain"

        class TextModel(PreTrainedModel):
            config: TextConfig
            _can_record_outputs = {"hidden_states": nn.Linear}

            def __init__(self, config):
                super().__init__(config)
                self.proj = nn.Linear(4, 4)

        class PlainModel(PreTrainedModel):
            config: PlainConfig

            def __init__(self, config):
                super().__init__(config)
                self.proj = nn.Linear(4, 4)
    """,
    # the composite configurations, each turning the dict passed for its part into a configuration
    "src/transformers/models/outer/modeling_outer.py": """
        class VlmConfig(PreTrainedConfig):
            model_type = "vlm"
            sub_configs = {"text_config": AutoConfig}
            text_config: dict | None = None

            def __post_init__(self, **kwargs):
                if isinstance(self.text_config, dict):
                    self.text_config = CONFIG_MAPPING[self.text_config["model_type"]](**self.text_config)

        class VlmModel(PreTrainedModel):
            config: VlmConfig

            def __init__(self, config):
                super().__init__(config)
                self.language_model = AutoModel.from_config(config.text_config)

        class OuterConfig(PreTrainedConfig):
            model_type = "outer"
            sub_configs = {"vlm_config": PreTrainedConfig}
            vlm_config: dict | None = None

            def __post_init__(self, **kwargs):
                if isinstance(self.vlm_config, dict):
                    self.vlm_config = CONFIG_MAPPING[self.vlm_config["model_type"]](**self.vlm_config)

        class OuterModel(PreTrainedModel):
            config: OuterConfig

            def __init__(self, config):
                super().__init__(config)
                self.vlm = AutoModel.from_config(config.vlm_config)

        class AutoPartConfig(PreTrainedConfig):
            model_type = "auto_part"
            sub_configs = {"part": AutoConfig}
            part: dict | None = None

            def __post_init__(self, **kwargs):
                if isinstance(self.part, dict):
                    self.part = CONFIG_MAPPING[self.part["model_type"]](**self.part)

        class AutoPartModel(PreTrainedModel):
            config: AutoPartConfig

            def __init__(self, config):
                super().__init__(config)
                self.inner = AutoModel.from_config(config.part)

        class ForcedTextConfig(AutoPartConfig):
            def __post_init__(self, **kwargs):
                if isinstance(self.part, dict):
                    self.part["model_type"] = "text"
                    self.part = CONFIG_MAPPING[self.part["model_type"]](**self.part)

        class ForcedPlainConfig(AutoPartConfig):
            def __post_init__(self, **kwargs):
                if isinstance(self.part, dict):
                    self.part["model_type"] = "plain"
                    self.part = CONFIG_MAPPING[self.part["model_type"]](**self.part)

        class ForcedTextModel(AutoPartModel):
            config: ForcedTextConfig

        class ForcedPlainModel(AutoPartModel):
            config: ForcedPlainConfig
    """,
    # sage and sorrel build their vision part from a class of another file of their folder
    "src/transformers/models/sage/modeling_sage.py": """
        from .vision import SageVision, SorrelVision

        class SageConfig(PreTrainedConfig):
            model_type = "sage"

        class SorrelConfig(PreTrainedConfig):
            model_type = "sorrel"

        class SageModel(PreTrainedModel):
            config: SageConfig

            def __init__(self, config):
                super().__init__(config)
                self.vision = SageVision(config)

        class SorrelModel(PreTrainedModel):
            config: SorrelConfig

            def __init__(self, config):
                super().__init__(config)
                self.vision = SorrelVision(config)
    """,
    "src/transformers/models/sage/vision.py": """
        from torch import nn

        class SageVision(PreTrainedModel):
            _can_record_outputs = {"hidden_states": nn.Linear}

            def __init__(self, config):
                super().__init__(config)
                self.proj = nn.Linear(4, 4)

        class SorrelVision(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.proj = nn.Linear(4, 4)
    """,
    "src/transformers/models/sigma/modeling_sigma.py": """
        class SigmaConfig(PreTrainedConfig):
            model_type = "sigma"

        class SigmaModel(PreTrainedModel):
            config: SigmaConfig

        class SigmaHeadModel(PreTrainedModel):
            config: SigmaConfig
    """,
}


@pytest.fixture
def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for folder, prefix, tester, keywords in MODELS:
        files[f"tests/models/{folder}/test_modeling_{folder}.py"] = MODEL_TEST.format(
            name=folder.title(),
            config=f"{prefix}Config",
            model=f"{prefix}Model",
            tester=tester,
            keywords=keywords,
        )
    files["tests/models/sigma/test_modeling_sigma.py"] = SIGMA_TEST
    for folder, text in (("lark", "TextConfig(size=self.hidden_size)"), ("loom", "PlainConfig()")):
        files[f"tests/models/{folder}/test_modeling_{folder}.py"] = LOCAL_PARTS_TEST.format(
            name=folder.title(), text=text
        )
    files["tests/models/sigmahead/test_modeling_sigmahead.py"] = SIGMA_TEST.replace(
        "(SigmaModel, SigmaHeadModel)", "(SigmaHeadModel,)"
    )
    return write_tree(make_repo(files), LIBRARY)


def test_the_dicts_passed_choose_the_parts_classes(checkout, scan):
    results = scan(checkout)
    found = verdicts(results, "test_capture_outputs")
    decided = {folder: "ran" for folder in found["ran"]} | {folder: "skipped" for folder in found["skipped"]}
    assert decided == {
        "opal": "ran",
        "onyx": "skipped",
        "pine": "ran",
        "palm": "skipped",
        "rose": "ran",
        "rue": "skipped",
        "nest": "ran",
        "nook": "skipped",
        "sage": "ran",
        "sorrel": "skipped",
        "lark": "ran",
        "loom": "skipped",
        "sigma": "skipped",  # they build no part that records
        "sigmahead": "skipped",
    }
    assert found["undecided"] == ["reed"]  # to_dict()'s model type, not forced: only the run knows


def test_a_model_class_the_test_file_imports_is_compared_in_its_override(checkout, scan):
    results = scan(checkout)
    found = verdicts(results, "test_training")
    assert "sigma" in found["skipped"] and "sigmahead" in found["ran"]
    assert found["undecided"] == []
