"""What an instance may hold decides "none of them has it".

When a constructor builds a model only under a condition, the module tree is not certain, but the
models the instance may hold are bounded: if none of them declares ``_keep_in_fp32_modules``, the
gathered set is empty, and if none of them, nor any part of the run's configuration, has a type
with weight conversions, ``get_model_conversion_mapping`` is empty. A model with a part of the
configuration whose class is not known, or that builds what cannot be followed, stays undecided,
also when it has no sub-configurations (Flava's image codebook and Blt's patcher, built under a
condition, are what these were found on). A constructor that makes its configuration only under
``if config is None:`` (Musicgen's) still builds its parts from the one the test passes.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_model_class_lists import COMMON as GATHERING_COMMON
from tests.skips.models.test_runtime_model_class_lists import LIBRARY as GATHERING_LIBRARY
from tests.skips.models.test_runtime_module_tree import COMMON as TREE_COMMON
from tests.skips.models.test_runtime_module_tree import LIBRARY as TREE_LIBRARY

# The module-tree fixture's common tests (`test_nested_conversions` among them) and the class-list
# fixture's `test_keep_in_fp32`.
COMMON = TREE_COMMON + GATHERING_COMMON[GATHERING_COMMON.index("    def test_keep_in_fp32(") :]

MODEL_TEST = """
import unittest
from transformers import {name}Model
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent):
        self.parent = parent
        self.{part} = {{"hidden_size": 4}}


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

NEWLINE = "\n"
# name -> (its configuration's sub_configs, what its constructor builds)
MODELS = {
    # a plain model under a condition, from a part of a known class
    "Kappa": (
        '{"plain_config": PlainConfig}',
        "if config.use_plain:\n    self.plain = PlainModel(config.plain_config)",
    ),
    # a plain model under a condition; a part the run chooses, which no model is built from here
    "Lambda": (
        '{"text_config": AutoConfig}',
        "if config.use_plain:\n    self.plain = PlainModel(PlainConfig())",
    ),
    # a text model (fp32 modules, a type with conversions) under a condition
    "Mu": (
        '{"text_config": TextConfig}',
        "if config.use_text:\n    self.text = TextEncoderModel(config.text_config)",
    ),
    # a text model, always
    "Nu": ('{"text_config": TextConfig}', "self.text = TextEncoderModel(config.text_config)"),
    # no parts, but a module built by a function whose file is not read
    "Xi": ("{}", "self.vision = build_vision(config)"),
    # an activation through a local name bound to an entry of the library's table, and a text model
    "Sigma": (
        '{"text_config": TextConfig}',
        "act = ACT2CLS[config.hidden_act]\nself.act = act()\nself.text = TextEncoderModel(config.text_config)",
    ),
    # only that activation
    "Tau": ("{}", "act = ACT2CLS[config.hidden_act]\nself.act = act()"),
}

# Built without a configuration, these make one from the text model they are handed; the tests build
# them from the tester's, whose text part is of the type given here.
REBUILT = {"Pi": "text", "Rho": "plain"}

# The gathering base model, the text encoder (`_keep_in_fp32_modules`, type "text") and the plain
# model of the class-list fixture; the conversion table (the "text" type) of the module-tree one.
SHARED_FILES = (
    "modeling_utils.py",
    "configuration_utils.py",
    "models/text/modeling_text.py",
    "models/plain/modeling_plain.py",
)

LIBRARY = {
    **{f"src/transformers/{path}": GATHERING_LIBRARY[f"src/transformers/{path}"] for path in SHARED_FILES},
    "src/transformers/conversion_mapping.py": TREE_LIBRARY["src/transformers/conversion_mapping.py"],
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("text", "TextConfig"), ("plain", "PlainConfig")])

        class AutoConfig:
            pass
    """,
    # a shared module the analyzer does not read: what its function builds cannot be followed
    "src/transformers/vision_utils.py": """
        def build_vision(config):
            return VisionTower(config)
    """,
    "src/transformers/models/auto/modeling_auto.py": """
        MODEL_MAPPING_NAMES = OrderedDict([("text", "TextEncoderModel"), ("plain", "PlainModel")])
        MODEL_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, MODEL_MAPPING_NAMES)

        class AutoModel(_BaseAutoModelClass):
            _model_mapping = MODEL_MAPPING
    """,
    **{
        f"src/transformers/models/{name.lower()}/modeling_{name.lower()}.py": f"""
        from ...vision_utils import build_vision
        from ...activations import ACT2CLS
        from ..plain.modeling_plain import PlainConfig, PlainModel
        from ..text.modeling_text import TextConfig, TextEncoderModel


        class {name}Config(PreTrainedConfig):
            model_type = "{name.lower()}"
            sub_configs = {sub_configs}


        class {name}Model(PreTrainedModel):
            config: {name}Config

            def __init__(self, config):
                super().__init__(config)
                {builds.replace(NEWLINE, NEWLINE + " " * 16)}
                self.post_init()
    """
        for name, (sub_configs, builds) in MODELS.items()
    },
    **{
        f"src/transformers/models/{name.lower()}/modeling_{name.lower()}.py": f"""
        class {name}Config(PreTrainedConfig):
            model_type = "{name.lower()}"
            sub_configs = {{"text_config": AutoConfig}}


        class {name}Model(PreTrainedModel):
            config: {name}Config

            def __init__(self, config=None, text_model=None):
                if config is None:
                    config = {name}Config(text_config=text_model.config)
                super().__init__(config)
                self.text = AutoModel.from_config(config.text_config)
                self.post_init()
    """
        for name in REBUILT
    },
}


@pytest.fixture
def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for name in MODELS:
        part = "plain_config" if name == "Kappa" else "text_config"
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = MODEL_TEST.format(
            name=name, part=part
        )
    for name, model_type in REBUILT.items():
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = MODEL_TEST.format(
            name=name, part="text_config"
        ).replace('{"hidden_size": 4}', f'{{"model_type": "{model_type}"}}')
    return write_tree(make_repo(files), LIBRARY)


def test_no_model_an_instance_may_hold_declares_fp32_modules(checkout, scan):
    """kappa and lambda may hold only a plain model (lambda's text part, of a class only the run
    knows, builds nothing): their sets are empty. mu may hold a text model: undecided; nu's text
    model declares some: never skipped. xi has no parts, but what it builds cannot be followed:
    undecided, never skipped."""
    outcome = verdicts(scan(checkout), "test_keep_in_fp32")
    assert {"kappa", "lambda"} <= set(outcome["skipped"])
    assert {"mu", "nu", "xi"} <= set(outcome["undecided"])


def test_no_model_nor_part_an_instance_may_hold_has_conversions(checkout, scan):
    """kappa's only part and only model are plain: no conversions. lambda's text part may be of any
    type and mu may build a text model: undecided. xi has no parts, but what it builds cannot be
    followed: undecided, never skipped. nu holds a text model: ran. sigma's and tau's activation, a
    local name bound to an entry of the library's imported ACT2CLS, builds no model: sigma holds a
    text model (ran), tau nothing else (skipped)."""
    outcome = verdicts(scan(checkout), "test_nested_conversions")
    assert {
        key: [model for model in models if model.title() in MODELS] for key, models in outcome.items()
    } == {
        "ran": ["nu", "sigma"],
        "skipped": ["kappa", "tau"],
        "undecided": ["lambda", "mu", "xi"],
    }


def test_a_configuration_made_only_when_none_is_given_leaves_the_parts_to_the_tester(checkout, scan):
    """pi and rho rebind `config` only under `if config is None:`, which the tests never reach: the
    text part their tester's dict chooses is what they build. pi's is a text model (conversions),
    rho's a plain one (none)."""
    outcome = verdicts(scan(checkout), "test_nested_conversions")
    assert "pi" in outcome["ran"]
    assert "rho" in outcome["skipped"]
