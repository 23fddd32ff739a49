"""Run-time skips that depend on the models an instance holds (``model.modules()``), read from the
calls of the library's ``__init__`` methods on a tiny fake checkout.

``alpha`` holds a nested model built through ``AutoModel.from_config(config.text_config)``: its
flags and its model type count; ``zeta`` builds one declared ``AutoConfig``, which the tester's
dict chooses. ``beta`` holds no other model. ``epsilon`` builds its text model in
a method its ``__init__`` calls, ``eta`` in a module-level function of its file. ``delta`` builds
its vision part through a helper function the analyzer cannot follow, so what depends on it stays
undecided.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree

COMMON = """
import copy
import unittest

from transformers import PreTrainedModel
from transformers.conversion_mapping import get_model_conversion_mapping


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()

    def test_capture_outputs(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            with self.subTest(model_class.__name__):
                model = model_class(copy.deepcopy(config))
                recordable = [
                    (module._can_record_outputs or {}).keys()
                    for module in model.modules()
                    if isinstance(module, PreTrainedModel)
                ]
                recordable = set().union(*recordable)
                if len(recordable) == 0:
                    self.skipTest("No usage of the `capture_outputs` decorator.")

    def test_attention_parts(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(config)
            if not all(
                submodule._supports_sdpa for submodule in model.modules() if isinstance(submodule, PreTrainedModel)
            ):
                self.skipTest(reason="Parts of this model don't support sdpa")

    def test_named_parts(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(config)
            sub_models_supporting_sdpa = [
                module._supports_sdpa
                for name, module in model.named_modules()
                if isinstance(module, PreTrainedModel) and name != ""
            ]
            supports_sdpa_all_modules = (
                all(sub_models_supporting_sdpa) if len(sub_models_supporting_sdpa) > 0 else model._supports_sdpa
            )
            if not supports_sdpa_all_modules:
                self.skipTest(reason="A part of this model doesn't support sdpa")

    def test_has_named_parts(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        model = self.all_model_classes[0](config)
        parts = [name for name, module in model.named_modules() if isinstance(module, PreTrainedModel) and name != ""]
        if len(parts) == 0:
            self.skipTest(reason="No model inside this one")

    def test_tp_plan(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.base_model_tp_plan is None and all(
            getattr(getattr(config, key), "base_model_tp_plan", None) is None for key in config.sub_configs
        ):
            self.skipTest("Model does not have a TP plan.")

    def test_nested_conversions(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model = model_class(copy.deepcopy(config))
            if len(get_model_conversion_mapping(model, add_legacy=False)) == 0:
                self.skipTest(f"No conversion found for {model_class}")
"""

MODEL_TEST = """
import unittest
from transformers import {name}Config, {name}Model
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent):
        self.parent = parent


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            _supports_sdpa = False
            _can_record_outputs = None

            def __init__(self, config):
                super().__init__()
                self.config = config
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: ClassVar[dict] = {}
            base_model_tp_plan: ClassVar[dict | None] = None
    """,
    "src/transformers/conversion_mapping.py": """
        def _build_checkpoint_conversion_mapping():
            mapping = {"text": [WeightRenaming("a", "b")]}
            return mapping

        def get_model_conversion_mapping(model, key_mapping=None, hf_quantizer=None, add_legacy=True):
            return []  # its body is left to the run: the scan reads the mapping above
    """,
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("alpha", "AlphaConfig"), ("text", "TextConfig")])

        class AutoConfig:
            pass
    """,
    "src/transformers/models/auto/modeling_auto.py": """
        MODEL_MAPPING_NAMES = OrderedDict([("alpha", "AlphaModel"), ("text", "TextModel")])
        MODEL_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, MODEL_MAPPING_NAMES)

        class AutoModel(_BaseAutoModelClass):
            _model_mapping = MODEL_MAPPING
    """,
    "src/transformers/models/text/modeling_text.py": """
        class TextConfig(PreTrainedConfig):
            model_type = "text"
            base_model_tp_plan = {"layers.*.proj": "colwise"}

        class TextLayer(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.proj = nn.Linear(config.hidden_size, config.hidden_size)

        class TextModel(PreTrainedModel):
            config: TextConfig
            _supports_sdpa = False
            _can_record_outputs = {"hidden_states": TextLayer}

            def __init__(self, config):
                super().__init__(config)
                self.layers = nn.ModuleList([TextLayer(config) for _ in range(config.num_hidden_layers)])
                self.post_init()
    """,
    "src/transformers/models/alpha/modeling_alpha.py": """
        class AlphaConfig(PreTrainedConfig):
            model_type = "alpha"
            sub_configs = {"text_config": TextConfig}
            text_config: dict | None = None

        class AlphaModel(PreTrainedModel):
            config: AlphaConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.language_model = AutoModel.from_config(config.text_config)
                self.post_init()
    """,
    "src/transformers/models/beta/modeling_beta.py": """
        class BetaConfig(PreTrainedConfig):
            model_type = "beta"

        class BetaModel(PreTrainedModel):
            config: BetaConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                layer_class = BetaCrossLayer if config.cross else BetaLayer
                self.layers = nn.ModuleList([layer_class(config) for _ in range(2)])
                self.post_init()

        class BetaLayer(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.dense = nn.Linear(4, 4)

        class BetaCrossLayer(BetaLayer):
            pass
    """,
    # epsilon builds its text model in a method __init__ calls, its layers from a table and an import;
    # the methods of a tensor it computes build nothing
    "src/transformers/models/epsilon/modeling_epsilon.py": """
        from ...activations import ACT2CLS

        class EpsilonConfig(PreTrainedConfig):
            model_type = "epsilon"

        class EpsilonLayer(nn.Module):
            pass

        class EpsilonSdpaLayer(EpsilonLayer):
            pass

        EPSILON_LAYER_CLASSES = {"eager": EpsilonLayer, "sdpa": EpsilonSdpaLayer}

        class EpsilonModel(PreTrainedModel):
            config: EpsilonConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.layer = EPSILON_LAYER_CLASSES[config._attn_implementation](config)
                self.act = ACT2CLS[config.hidden_act]()
                self._init_parts(config)
                self.post_init()

            def _init_parts(self, config):
                self.text = TextModel(config)
                scale = torch.ones(4)[None, :]
                scale = scale.expand(2, -1).contiguous()
    """,
    # zeta's text part is declared AutoConfig: the tester's dict chooses it by its model type
    "src/transformers/models/zeta/modeling_zeta.py": """
        class ZetaConfig(PreTrainedConfig):
            model_type = "zeta"
            sub_configs = {"text_config": AutoConfig}
            text_config: dict | None = None

        class ZetaModel(PreTrainedModel):
            config: ZetaConfig

            def __init__(self, config):
                super().__init__(config)
                self.language_model = AutoModel.from_config(config.text_config)
                self.post_init()
    """,
    # eta calls module-level functions of its file (one builds the text model, one imports a kernel
    # loader where it calls it) and one of its own, a class alias, a kernel imported from another
    # package, and a ModuleList of its own that appends layers
    "src/transformers/models/eta/modeling_eta.py": """
        from torch import nn
        from fla.modules import FusedNorm

        EtaLayerNorm = nn.LayerNorm

        def round_filters(config, width):
            return int(math.ceil(width * config.scale))

        def build_text(config):
            return TextModel(config)

        def load_kernels():
            from ...integrations.hub_kernels import get_kernel

            return get_kernel("kernels-community/eta")

        class EtaConfig(PreTrainedConfig):
            model_type = "eta"

        class EtaLayers(nn.ModuleList):
            def __init__(self):
                super().__init__()
                self.append(nn.Linear(4, 4))

        class EtaModel(PreTrainedModel):
            config: EtaConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                def scaled(width):
                    return int(math.ceil(width * 2))

                load_kernels()
                width = scaled(round_filters(config, 4))
                self.layers = EtaLayers()
                self.norm = EtaLayerNorm(width)
                self.fused = FusedNorm(width)
                self.text = build_text(config)
                self.post_init()
    """,
    "src/transformers/models/delta/modeling_delta.py": """
        class DeltaConfig(PreTrainedConfig):
            model_type = "delta"
            sub_configs = {"backbone_config": AutoConfig}

        class DeltaModel(PreTrainedModel):
            config: DeltaConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.vision = load_backbone(config)
                self.post_init()
    """,
}


@pytest.fixture
def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for name in ("Alpha", "Beta", "Delta", "Epsilon", "Eta"):
        files[f"tests/models/{name.lower()}/test_modeling_{name.lower()}.py"] = MODEL_TEST.format(name=name)
    files["tests/models/zeta/test_modeling_zeta.py"] = MODEL_TEST.format(name="Zeta").replace(
        "self.parent = parent", 'self.parent = parent\n        self.text_config = {"model_type": "text"}'
    )
    files["tests/models/alpha/test_modeling_alpha.py"] = files[
        "tests/models/alpha/test_modeling_alpha.py"
    ].replace("self.parent = parent", "self.parent = parent\n        self.text_config = make_text_config()")
    return write_tree(make_repo(files), LIBRARY)


def test_recorded_outputs_of_a_nested_model_count(checkout, scan):
    """alpha's own class records nothing, the text model it builds through AutoModel does."""
    results = scan(checkout)
    assert verdicts(results, "test_capture_outputs") == {
        "ran": ["alpha", "epsilon", "eta", "zeta"],
        "skipped": ["beta"],
        "undecided": ["delta"],
    }
    assert results["test_capture_outputs"]["reasons_skipped"] == [
        "beta: No usage of the `capture_outputs` decorator."
    ]


def test_a_flag_of_a_nested_model_decides_the_skip(checkout, scan):
    """alpha supports SDPA, its text model does not: the whole model is skipped."""
    results = scan(checkout)
    assert verdicts(results, "test_attention_parts") == {
        "ran": ["beta"],
        "skipped": ["alpha", "epsilon", "eta", "zeta"],
        "undecided": ["delta"],
    }


def test_named_modules_name_every_module_but_the_model_itself(checkout, scan):
    """``model.named_modules()`` gives the model itself as ``""`` and the models it holds under names
    never empty: alpha's text model decides alpha's skip, beta (no model inside) falls back on its own
    flag; only the models that hold another have parts named."""
    results = scan(checkout)
    assert verdicts(results, "test_named_parts") == {
        "ran": ["beta"],
        "skipped": ["alpha", "epsilon", "eta", "zeta"],
        "undecided": ["delta"],
    }
    assert verdicts(results, "test_has_named_parts") == {
        "ran": ["alpha", "epsilon", "eta", "zeta"],
        "skipped": ["beta"],
        "undecided": ["delta"],
    }


def test_conversions_of_a_nested_model_type_count(checkout, scan):
    """alpha has no conversion of its own; its nested model's type (text) has one."""
    results = scan(checkout)
    assert verdicts(results, "test_nested_conversions") == {
        "ran": ["alpha", "epsilon", "eta", "zeta"],
        "skipped": ["beta"],
        "undecided": ["delta"],
    }


def test_a_class_level_plan_of_a_sub_configuration_is_read_whatever_the_tester_passes(checkout, scan):
    """alpha's tester passes its text part as a value not read; base_model_tp_plan is a ClassVar,
    which that value does not set: alpha's text part has a plan, beta's configuration none."""
    results = scan(checkout)
    found = verdicts(results, "test_tp_plan")
    assert "alpha" in found["ran"] and "zeta" in found["ran"]
    assert "beta" in found["skipped"]
