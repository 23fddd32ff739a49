"""Module trees whose parts the run's configuration chooses, on the fake checkout of
``test_runtime_module_tree``.

``theta`` builds its backbone with ``load_backbone(config)`` inside a module that is no model, then
replaces its norms in a recursive function: the tester's ``backbone_config`` dict chooses it.
``iota`` is built the same way but its tester passes no backbone part: undecided; ``omicron``'s
tester builds the part in a method of its own (``backbone_config=self.get_backbone_config()``). ``kappa``'s text
part comes from its configuration's ``__post_init__`` (a forced type for a dict, a default for
None); ``mu``'s ``__post_init__`` keeps a dict without a model type as it is: undecided. ``nu``'s
head hands its whole configuration to the model that builds the text part. ``pi``'s stages are
handed the class they build (``downsample=PiMerging if ... else None``), ``rho``'s get it
positionally: undecided. ``xi`` rebinds
``config`` to a part before handing it on, so the parts the tester chose do not apply there.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_module_tree import COMMON, LIBRARY, MODEL_TEST

BACKBONE_LIBRARY = {
    "src/transformers/backbone_utils.py": """
        def load_backbone(config):
            return AutoBackbone.from_config(config=config.backbone_config)
    """,
    "src/transformers/models/auto/modeling_auto.py": """
        MODEL_MAPPING_NAMES = OrderedDict([("alpha", "AlphaModel"), ("text", "TextModel")])
        MODEL_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, MODEL_MAPPING_NAMES)
        MODEL_FOR_BACKBONE_MAPPING_NAMES = OrderedDict([("text", "TextModel")])
        MODEL_FOR_BACKBONE_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, MODEL_FOR_BACKBONE_MAPPING_NAMES)

        class AutoModel(_BaseAutoModelClass):
            _model_mapping = MODEL_MAPPING

        class AutoBackbone(_BaseAutoBackboneClass):
            _model_mapping = MODEL_FOR_BACKBONE_MAPPING
    """,
    **{
        f"src/transformers/models/{name}/modeling_{name}.py": f"""
        from ...backbone_utils import load_backbone

        def replace_batch_norm(model):
            for name, module in model.named_children():
                if isinstance(module, nn.BatchNorm2d):
                    new_module = FrozenNorm(module.num_features)
                    new_module.weight.copy_(module.weight)
                    model._modules[name] = new_module
                if len(list(module.children())) > 0:
                    replace_batch_norm(module)

        class FrozenNorm(nn.Module):
            def __init__(self, width):
                super().__init__()

        class {name.title()}Config(PreTrainedConfig):
            model_type = "{name}"
            sub_configs = {{"backbone_config": AutoConfig}}
            backbone_config: dict | None = None

        class {name.title()}ConvEncoder(nn.Module):
            def __init__(self, config):
                super().__init__()
                backbone = load_backbone(config)
                replace_batch_norm(backbone)
                self.model = backbone

        class {name.title()}Model(PreTrainedModel):
            config: {name.title()}Config
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.backbone = {name.title()}ConvEncoder(config)
                self.post_init()
    """
        for name in ("theta", "iota", "omicron")
    },
    "src/transformers/models/kappa/modeling_kappa.py": """
        class KappaConfig(PreTrainedConfig):
            model_type = "kappa"
            sub_configs = {"text_config": AutoConfig, "vision_config": AutoConfig}
            text_config: dict | None = None
            vision_config: dict | None = None

            def __post_init__(self, **kwargs):
                if isinstance(self.text_config, dict):
                    self.text_config["model_type"] = "text"
                    self.text_config = CONFIG_MAPPING[self.text_config["model_type"]](**self.text_config)
                elif self.text_config is None:
                    logger.info("no text part: the default one")
                    self.text_config = CONFIG_MAPPING["text"]()
                if self.vision_config is None:
                    self.vision_config = TextConfig()
                self.text_config.num_labels = 3
                super().__post_init__(**kwargs)

        class KappaModel(PreTrainedModel):
            config: KappaConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.language_model = AutoModel.from_config(config.text_config)
                self.vision_model = AutoModel.from_config(config.vision_config)
                self.post_init()
    """,
    "src/transformers/models/mu/modeling_mu.py": """
        class MuConfig(PreTrainedConfig):
            model_type = "mu"
            sub_configs = {"text_config": AutoConfig}
            text_config: dict | None = None

            def __post_init__(self, **kwargs):
                if isinstance(self.text_config, dict) and "model_type" in self.text_config:
                    self.text_config = CONFIG_MAPPING[self.text_config["model_type"]](**self.text_config)
                super().__post_init__(**kwargs)

        class MuModel(PreTrainedModel):
            config: MuConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.language_model = AutoModel.from_config(config.text_config)
                self.post_init()
    """,
    "src/transformers/models/nu/modeling_nu.py": """
        class NuConfig(PreTrainedConfig):
            model_type = "nu"
            sub_configs = {"text_config": AutoConfig}
            text_config: dict | None = None

        class NuModel(PreTrainedModel):
            config: NuConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.language_model = AutoModel.from_config(config.text_config)
                self.post_init()

        class NuForCausalLM(PreTrainedModel):
            config: NuConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.model = NuModel(config)
                self.post_init()
    """,
    "src/transformers/models/xi/modeling_xi.py": """
        class XiConfig(PreTrainedConfig):
            model_type = "xi"
            sub_configs = {"text_config": AutoConfig, "vision_config": AutoConfig}
            text_config: dict | None = None
            vision_config: dict | None = None

        class XiEncoder(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.text = AutoModel.from_config(config.text_config)

        class XiModel(PreTrainedModel):
            config: XiConfig
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                config = config.vision_config
                self.encoder = XiEncoder(config)
                self.post_init()
    """,
    **{
        f"src/transformers/models/{name}/modeling_{name}.py": f"""
        class {name.title()}Config(PreTrainedConfig):
            model_type = "{name}"

        class {name.title()}Merging(nn.Module):
            def __init__(self, dim, norm_layer=nn.LayerNorm):
                super().__init__()
                self.norm = norm_layer(dim)

        class {name.title()}Stage(nn.Module):
            def __init__(self, config, dim, downsample):
                super().__init__()
                if downsample is not None:
                    self.downsample = downsample(dim, norm_layer=nn.LayerNorm)

        class {name.title()}Model(PreTrainedModel):
            config: {name.title()}Config
            _supports_sdpa = True

            def __init__(self, config):
                super().__init__(config)
                self.stages = nn.ModuleList(
                    [{name.title()}Stage(config, 4, {stage_downsample}) for i in range(2)]
                )
                self.post_init()
    """
        for name, stage_downsample in (
            ("pi", "downsample=PiMerging if i < 1 else None"),
            ("rho", "RhoMerging if i < 1 else None"),
        )
    },
}

TESTER_ATTRIBUTES = {
    "theta": 'self.backbone_config = {"model_type": "text"}',
    "iota": "",
    "omicron": "",
    "pi": "",
    "rho": "",
    "kappa": 'self.text_config = {"hidden_size": 4}',
    "mu": 'self.text_config = {"hidden_size": 4}',
    "nu": 'self.text_config = {"model_type": "text"}',
    "xi": 'self.text_config = {"model_type": "text"}\n        self.vision_config = {"model_type": "alpha"}',
}


@pytest.fixture
def checkout(make_repo):
    files = {"tests/test_modeling_common.py": COMMON}
    for name, attributes in TESTER_ATTRIBUTES.items():
        test = MODEL_TEST.format(name=name.title()).replace(
            "self.parent = parent", f"self.parent = parent\n        {attributes}"
        )
        files[f"tests/models/{name}/test_modeling_{name}.py"] = test
    files["tests/models/nu/test_modeling_nu.py"] = files["tests/models/nu/test_modeling_nu.py"].replace(
        "all_model_classes = (NuModel,)", "all_model_classes = (NuForCausalLM,)"
    )
    kappa = "tests/models/kappa/test_modeling_kappa.py"  # its get_config leaves the vision part out
    files[kappa] = files[kappa].replace(
        "\n\nclass KappaModelTest(",
        "\n    def get_config(self):\n        return KappaConfig(text_config=self.text_config)\n\n\nclass KappaModelTest(",
    )
    omicron = "tests/models/omicron/test_modeling_omicron.py"  # its backbone from a method of its own
    files[omicron] = files[omicron].replace(
        "\n\nclass OmicronModelTest(",
        """
    def get_backbone_config(self):
        return TextConfig(hidden_size=self.hidden_size)

    def get_config(self):
        return OmicronConfig(backbone_config=self.get_backbone_config())


class OmicronModelTest(""",
    )
    return write_tree(make_repo(files), {**LIBRARY, **BACKBONE_LIBRARY})


def test_parts_the_run_chooses_decide_the_recorded_outputs(checkout, scan):
    """theta's backbone, kappa's parts and nu's text part are the text model, which records its
    outputs; iota's backbone, mu's text part and xi's rebound configuration are left to the run."""
    results = scan(checkout)
    assert verdicts(results, "test_capture_outputs") == {
        "ran": ["kappa", "nu", "omicron", "theta"],
        "skipped": ["pi"],
        "undecided": ["iota", "mu", "rho", "xi"],
    }


def test_parts_the_run_chooses_decide_sdpa_and_conversions(checkout, scan):
    """The text model does not support SDPA and its model type has a conversion."""
    results = scan(checkout)
    assert verdicts(results, "test_attention_parts") == {
        "ran": ["pi"],
        "skipped": ["kappa", "nu", "omicron", "theta"],
        "undecided": ["iota", "mu", "rho", "xi"],
    }
    assert verdicts(results, "test_nested_conversions") == {
        "ran": ["kappa", "nu", "omicron", "theta"],
        "skipped": ["pi"],
        # rho has no sub-configuration, but what it builds is not known: it may be of another type
        "undecided": ["iota", "mu", "rho", "xi"],
    }
