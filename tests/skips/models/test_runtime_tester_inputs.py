"""Run-time skips decided by what the model tester builds: the rank of its ``input_ids``,
whether its attention mask holds a zero, and a sub-configuration it passes as an object.

Each mechanism has a model that must run and one that must skip; a random mask too small to be
sure of a zero, or a mask handed to a helper the tester does not define, stays undecided.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree

GENERATION = """
class GenerationTesterMixin:
    model_tester = None

    def test_padding_free(self):
        config, inputs_dict = self.model_tester.prepare_config_and_inputs_for_common()
        if "input_ids" not in inputs_dict or inputs_dict["input_ids"].ndim != 2:
            self.skipTest("Model dummy inputs should contain text input ids")
        if 0 not in inputs_dict.get("attention_mask", []) or "attention_mask" not in inputs_dict:
            self.skipTest("Model dummy inputs should contain padding in their attention mask")

    def test_decoder(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if not config.is_decoder:
            self.skipTest("not a decoder")

    def test_encoder_keys(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if any(name for name in config.to_dict() if name.startswith("encoder")):
            self.skipTest("derived from an encoder-decoder model")

    def test_part_type(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.backbone_config.model_type != "part":
            self.skipTest("the part is of another type")

    def test_tp_plan(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.base_model_tp_plan is None and all(
            getattr(getattr(config, key), "base_model_tp_plan", None) is None for key in config.sub_configs
        ):
            self.skipTest("Model does not have a TP plan.")
"""

# A shared base tester, as tests/causal_lm_tester.py: inputs built in prepare_config_and_inputs.
BASE_TESTER = """
class BaseTester:
    def __init__(self, parent, batch_size=13, seq_length=7, use_input_mask=True):
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.use_input_mask = use_input_mask

    def prepare_config_and_inputs(self):
        input_ids = ids_tensor([self.batch_size, self.seq_length], 99)
        input_mask = None
        if self.use_input_mask:
            input_mask = torch.tril(torch.ones_like(input_ids).to(torch_device))
        return self.get_config(), input_ids, input_mask

    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask = self.prepare_config_and_inputs()
        return config, {"input_ids": input_ids, "attention_mask": input_mask}
"""

MODEL_TEST = """
import unittest
from transformers import {name}Config, {name}Model
from ...base_tester import BaseTester
from ...generation.test_utils import GenerationTesterMixin


class {name}ModelTester(BaseTester):
{get_config}
{tester}

class {name}ModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {name}ModelTester(self{keywords})
"""

PLAIN_CONFIG = "    def get_config(self):\n        return {name}Config()"

TESTERS = {
    # the base tester's ids_tensor([13, 7]) and tril(ones): rank 2, a zero above the diagonal
    "alpha": ("", ""),
    # input_ids of rank 3, built by an override that calls super() and reshapes nothing
    "beta": (
        """
    def prepare_config_and_inputs(self):
        config, input_ids, input_mask = super().prepare_config_and_inputs()
        input_ids = ids_tensor([self.batch_size, self.seq_length, 4], 99) + 1
        return config, input_ids, input_mask
""",
        "",
    ),
    # a mask of ones: no padding
    "gamma": (
        """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, _ = self.prepare_config_and_inputs()
        attention_mask = torch.ones(input_ids.shape, dtype=torch.long).to(torch_device)
        inputs_dict = {"input_ids": input_ids, "attention_mask": attention_mask}
        return config, inputs_dict
""",
        "",
    ),
    # a random 0/1 mask over 13 x 6 random entries: a zero is certain
    "delta": (
        """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, _ = self.prepare_config_and_inputs()
        return config, {"input_ids": input_ids, "attention_mask": random_attention_mask([13, 7])}
""",
        "",
    ),
    # 3 x 13 random entries (the first column is set to 1): no zero with probability 2**-39
    "sampi": (
        """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, _ = self.prepare_config_and_inputs()
        return config, {"input_ids": input_ids, "attention_mask": random_attention_mask([3, 14])}
""",
        "",
    ),
    # the same random mask over 2 x 2 random entries: left to the run
    "epsilon": (
        """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, _ = self.prepare_config_and_inputs()
        return config, {"input_ids": input_ids, "attention_mask": random_attention_mask([2, 3])}
""",
        "",
    ),
    # the base tester without a mask (setUp passes use_input_mask=False): the value is None
    "zeta": ("", ", use_input_mask=False"),
    # the mask goes through a function the tester does not define: it may change in place
    "eta": (
        """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask = self.prepare_config_and_inputs()
        add_noise(input_mask)
        return config, {"input_ids": input_ids, "attention_mask": input_mask}
""",
        "",
    ),
    # the configuration get_config() returned is changed before it is returned
    "kappa": (
        """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask = self.prepare_config_and_inputs()
        config.is_decoder = True
        return config, {"input_ids": input_ids, "attention_mask": input_mask}
""",
        "",
    ),
    # a configuration built in the method itself: its keywords are what it holds
    "mu": (
        """
    def prepare_config_and_inputs_for_common(self):
        _, input_ids, input_mask = self.prepare_config_and_inputs()
        config = MuConfig(is_decoder=True)
        return config, {"input_ids": input_ids, "attention_mask": input_mask}
""",
        "",
    ),
    # the configuration goes through a function the tester does not define: it may change
    "lambda": (
        """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask = self.prepare_config_and_inputs()
        adapt(config)
        return config, {"input_ids": input_ids, "attention_mask": input_mask}
""",
        "",
    ),
}

# get_config with a parameter: read at its default; a call with another value is not followed
DEFAULTED_CONFIG = """    def get_config(self, is_decoder=True):
        return {name}Config(is_decoder=is_decoder)"""
GET_CONFIGS = {"xi": DEFAULTED_CONFIG, "omicron": DEFAULTED_CONFIG}
TESTERS["xi"] = ("", "")
TESTERS["pi"] = ("", "")
# get_config builds its part with a method of the tester: the part's class is the one it names
BUILT_PART = """    backbone_class = {part}

    def get_config(self):
        kwargs = {{{{}}}}
        for key in self.config_args:
            kwargs[key] = getattr(self, key)
        kwargs["backbone_config"] = self.get_backbone_config()
        return {{name}}Config(**kwargs)

    def get_backbone_config(self):
        return self.backbone_class(hidden_size=4)"""
GET_CONFIGS["rho"] = BUILT_PART.format(part="PartConfig")
GET_CONFIGS["sigma"] = BUILT_PART.format(part="PlainConfig")
TESTERS["rho"] = TESTERS["sigma"] = ("", "")
# get_config builds the configuration, sets values on it, then returns it
SET_AFTER = """    def get_config(self):
        config = {{name}}Config(is_decoder=True)
        config.is_decoder = {later}
        return config"""
GET_CONFIGS["chi"] = SET_AFTER.format(later="True")
GET_CONFIGS["psi"] = SET_AFTER.format(later="False")
TESTERS["chi"] = TESTERS["psi"] = ("", "")
# no get_config: the configuration is built where the inputs are, with the names it is given
BUILT_HERE = """
    def prepare_config_and_inputs_for_common(self):
        config = {name}Config({keyword}=2)
        return config, {{"input_ids": ids_tensor([13, 7], 99), "attention_mask": torch.ones(13, 7)}}
"""
GET_CONFIGS["tau"] = GET_CONFIGS["upsilon"] = ""
TESTERS["tau"] = (BUILT_HERE.format(name="Tau", keyword="encoder_layers"), "")
TESTERS["upsilon"] = (BUILT_HERE.format(name="Upsilon", keyword="hidden_size"), "")
TESTERS["omicron"] = (
    """
    def prepare_config_and_inputs_for_common(self):
        _, input_ids, input_mask = self.prepare_config_and_inputs()
        return self.get_config(is_decoder=False), {"input_ids": input_ids, "attention_mask": input_mask}
""",
    "",
)

# an item of a mask of ones set to a literal: a zero at integer indices is there; a one keeps none
ITEM_SET = """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, _ = self.prepare_config_and_inputs()
        attention_mask = torch.ones(13, 7)
        inputs_dict = {{"input_ids": input_ids, "attention_mask": attention_mask}}
        attention_mask[-1, 0] = {value}
        return config, inputs_dict
"""
TESTERS["stigma"] = (ITEM_SET.format(value=0), "")
TESTERS["koppa"] = (ITEM_SET.format(value=1), "")

# a loop over known items with break / else (VLMModelTester's safe token), a dict added with
# update(), and the configuration only read by getattr: all followed
LOOPED = """
    def prepare_config_and_inputs_for_common(self):
        config = self.get_config()
        special_tokens = [0, 1]
        for i in range(99):
            if i not in special_tokens:
                safe_token_id = i
                break
        else:
            raise ValueError("no token id left")
        getattr(config, "is_decoder", False)
        input_ids = ids_tensor([13, 7], 99)
        input_ids[input_ids == 0] = safe_token_id
        inputs_dict = {"input_ids": input_ids}
        inputs_dict.update({"attention_mask": MASK})
        return config, inputs_dict
"""
# a condition on a float the tester holds: Python's truth decides it (0.1 is true)
TESTERS["lamed"] = (
    """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask = self.prepare_config_and_inputs()
        dropout = 0.1
        if dropout:
            config.is_decoder = True
        return config, {"input_ids": input_ids, "attention_mask": input_mask}
""",
    "",
)
# a condition only the run knows: both branches build the inputs with the same keys and the same
# input_ids (rank 3), and different masks; the ids' rank is known after it, the mask is not
TESTERS["ayin"] = (
    """
    def prepare_config_and_inputs_for_common(self):
        config, _, input_mask = self.prepare_config_and_inputs()
        input_ids = ids_tensor([self.batch_size, self.seq_length, 4], 99)
        if random.random() < 0.5:
            inputs_dict = {"input_ids": input_ids, "attention_mask": input_mask}
        else:
            inputs_dict = {"input_ids": input_ids, "attention_mask": None}
        return config, inputs_dict
""",
    "",
)
TESTERS["resh"] = (LOOPED.replace("MASK", "torch.tril(torch.ones(13, 7))"), "")
TESTERS["shin"] = (LOOPED.replace("MASK", "torch.ones(13, 7)"), "")

# the inputs moved to the device by a dict comprehension (BigBirdPegasus): its keys and tensors
COMPREHENDED = """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask = self.prepare_config_and_inputs()
        inputs_dict = {"input_ids": input_ids, "attention_mask": input_mask}
        return config, {key: inputs_dict[key].to(torch_device) for key in inputs_dict}
"""
TESTERS["qoph"] = (COMPREHENDED, "")

# the tester skips before it returns (pytest.skip raises): what it would return is never seen
SKIPPING = """
    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask = self.prepare_config_and_inputs()
        pytest.skip("no inputs for this model")
        return config, {"input_ids": input_ids, "attention_mask": input_mask}
"""
TESTERS["tet"] = (SKIPPING, "")

# get_config spreads a dict the tester holds: yot's a literal default, tsadi's a display of its parameters
SPREAD = """
    def __init__(self, parent, {parameter}):
        super().__init__(parent)
        self.config_kwargs = {held}

    def get_config(self):
        return {title}Config(**self.config_kwargs)
"""
for name, parameter, held in (
    ("yot", 'config={"encoder_layers": 2, "is_decoder": True}', "config"),
    ("tsadi", "is_decoder=False", '{"hidden_size": 4, "is_decoder": is_decoder}'),
):
    GET_CONFIGS[name] = ""
    TESTERS[name] = (SPREAD.format(parameter=parameter, held=held, title=name.title()), "")

# a part's dict the tester builds in __init__ from its parameters (Qwen2.5-VL's text_config);
# zayin's prepare_config_and_inputs changes it in place, so it is not read
HELD_PART = """
    def __init__(self, parent, kind="{kind}"):
        super().__init__(parent)
        self.backbone = {{"model_type": kind, "hidden_size": 4}}
{changed}
    def get_config(self):
        return {title}Config(backbone_config=self.backbone)
"""
CHANGED = """
    def prepare_config_and_inputs(self):
        self.backbone["model_type"] = "plain"
        return super().prepare_config_and_inputs()
"""
for name, kind, changed in (("vav", "part", ""), ("he", "plain", ""), ("zayin", "part", CHANGED)):
    GET_CONFIGS[name] = ""
    TESTERS[name] = (HELD_PART.format(kind=kind, changed=changed, title=name.title()), "")

# get_config takes parameters its body never reads (pix2struct's parts): any call builds the same
UNREAD_PARAMETERS = """    def get_config(self, text_config, vision_config):
        return {{name}}Config(is_decoder={value})"""
UNREAD_CALL = """
    def prepare_config_and_inputs_for_common(self):
        _, input_ids, input_mask = self.prepare_config_and_inputs()
        return self.get_config(input_ids, input_mask), {"input_ids": input_ids, "attention_mask": input_mask}
"""
GET_CONFIGS["omega"] = UNREAD_PARAMETERS.format(value="True")
GET_CONFIGS["digamma"] = UNREAD_PARAMETERS.format(value="False")
TESTERS["omega"] = TESTERS["digamma"] = (UNREAD_CALL, "")

LIBRARY = {
    "src/transformers/modeling_utils.py": """
        class PreTrainedModel(nn.Module):
            config_class = None
    """,
    "src/transformers/configuration_utils.py": """
        class PreTrainedConfig:
            sub_configs: ClassVar[dict] = {}
            is_decoder: bool = False
            base_model_tp_plan: ClassVar[dict | None] = None


        PretrainedConfig = PreTrainedConfig
    """,
    "src/transformers/models/auto/configuration_auto.py": """
        CONFIG_MAPPING_NAMES = OrderedDict([("part", "PartConfig"), ("plain", "PlainConfig")])

        class AutoConfig:
            pass
    """,
    "src/transformers/models/part/configuration_part.py": """
        class PartConfig(PreTrainedConfig):
            model_type = "part"
            base_model_tp_plan = {"layers.*.proj": "colwise"}

        class PlainConfig(PreTrainedConfig):
            model_type = "plain"
    """,
}


def _library_of(name: str) -> dict[str, str]:
    title = name.title()
    return {
        f"src/transformers/models/{name}/configuration_{name}.py": f"""
            class {title}Config(PreTrainedConfig):
                model_type = "{name}"
                sub_configs = {{"backbone_config": AutoConfig}}
        """,
        f"src/transformers/models/{name}/modeling_{name}.py": f"""
            class {title}Model(PreTrainedModel):
                config: {title}Config
        """,
    }


@pytest.fixture
def results(make_repo, scan):
    files = {"tests/generation/test_utils.py": GENERATION, "tests/base_tester.py": BASE_TESTER}
    library = dict(LIBRARY)
    for name, (tester, keywords) in TESTERS.items():
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            name=name.title(),
            tester=tester,
            keywords=keywords,
            get_config=GET_CONFIGS.get(name, PLAIN_CONFIG).format(name=name.title()),
        )
        library.update(_library_of(name))
    parts = {
        "theta": "PartConfig(hidden_size=4)",
        "iota": "PlainConfig(hidden_size=4)",
        "nu": '{"model_type": "part", "hidden_size": self.seq_length}',  # a dict, values not literal
    }
    for name, part in parts.items():
        get_config = f"    def get_config(self):\n        part = {part}\n        return {name.title()}Config(backbone_config=part)"
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(
            name=name.title(), tester="", keywords="", get_config=get_config
        )
        library.update(_library_of(name))
    # heta's and san's get_config take the part from a tester they hold, built in __init__
    held = """
    def __init__(self, parent):
        super().__init__(parent)
        self.backbone_tester = HeldTester(parent, hidden_size=4)

    def get_config(self):
        return {title}Config(backbone_config=self.backbone_tester.get_config())

class HeldTester:
    def __init__(self, parent, hidden_size=8):
        self.hidden_size = hidden_size

    def get_config(self):
        return {part}(hidden_size=self.hidden_size)
"""
    for name, part in (("heta", 'CONFIG_MAPPING["part"]'), ("san", "PlainConfig")):
        test_file = MODEL_TEST.format(
            name=name.title(), tester=held.format(title=name.title(), part=part), keywords="", get_config=""
        )
        files[f"tests/models/{name}/test_modeling_{name}.py"] = test_file
        library.update(_library_of(name))
    # pi's configuration derives from the old name of the base class, an alias of it
    library["src/transformers/models/pi/configuration_pi.py"] = """
        from ...configuration_utils import PretrainedConfig

        class PiConfig(PretrainedConfig):
            model_type = "pi"
    """
    # phi declares its part's class; the tester's dict still names another model type
    files["tests/models/phi/test_modeling_phi.py"] = MODEL_TEST.format(
        name="Phi",
        tester="",
        keywords="",
        get_config='    def get_config(self):\n        return PhiConfig(backbone_config={"model_type": "other"})',
    )
    library.update(_library_of("phi"))
    library["src/transformers/models/phi/configuration_phi.py"] = """
        class PhiConfig(PreTrainedConfig):
            model_type = "phi"
            sub_configs = {"backbone_config": PartConfig}
    """
    return scan(write_tree(make_repo(files), library))


def test_the_rank_and_the_zeros_of_the_testers_tensors_decide_the_padding_free_skips(results):
    found = verdicts(results, "test_padding_free")
    assert {"alpha", "delta", "kappa"} <= set(found["ran"])  # the others run on the base tester's inputs
    # tau, upsilon: a mask of ones; koppa: one written into it
    # ayin: the rank of input_ids both branches of a condition only the run knows hold
    assert found["skipped"] == ["ayin", "beta", "gamma", "koppa", "shin", "tau", "upsilon"]
    assert {"sampi", "stigma"} <= set(found["ran"])  # a zero written into a mask of ones
    assert "resh" in found["ran"] and "shin" in found["skipped"]  # after a loop run item by item
    assert "qoph" in found["ran"]  # a dict comprehension over the inputs keeps their keys and tensors
    assert found["undecided"] == ["epsilon", "eta", "tet", "zeta"]
    assert results["test_padding_free"]["reasons_skipped"][:3] == [
        "ayin: Model dummy inputs should contain text input ids",
        "beta: Model dummy inputs should contain text input ids",
        "gamma: Model dummy inputs should contain padding in their attention mask",
    ]


def test_a_part_passed_as_a_configuration_object_takes_that_class(results):
    """theta's tester passes ``PartConfig(...)`` (with a TP plan), iota's ``PlainConfig(...)``; nu's
    a dict naming the part's model type, its values read from the tester."""
    found = verdicts(results, "test_tp_plan")
    assert {"nu", "theta"} <= set(found["ran"]) and "iota" in found["skipped"]
    # rho's and sigma's get_config build the part with self.get_backbone_config()
    assert "rho" in found["ran"] and "sigma" in found["skipped"]
    # heta's held tester builds CONFIG_MAPPING["part"](...), san's PlainConfig(...)
    assert "heta" in found["ran"] and "san" in found["skipped"]
    # vav's and he's dicts take their model type from the tester's __init__ parameter
    assert "vav" in found["ran"] and "he" in found["skipped"] and "zayin" in found["undecided"]


def test_a_model_type_the_testers_dict_names_is_the_parts_own(results):
    """nu's dict names "part" for an AutoConfig part; phi's names "other" for a part declared as
    PartConfig: the instance holds "other" (the dict's keywords set it)."""
    found = verdicts(results, "test_part_type")
    assert "nu" in found["ran"] and "phi" in found["skipped"]
    assert "theta" not in found["undecided"] and "iota" not in found["undecided"]


def test_what_the_tester_sets_on_its_configuration_is_seen_by_the_test(results):
    """kappa sets ``config.is_decoder = True`` after get_config(); mu builds ``MuConfig(is_decoder=True)``
    itself; lambda hands the configuration to a function it does not define (it may change it); the
    others return it as get_config() built it."""
    found = verdicts(results, "test_decoder")
    assert {"kappa", "mu", "lamed"} <= set(found["ran"]) and "alpha" in found["skipped"]
    assert "lambda" in found["undecided"]
    # xi's get_config(is_decoder=True) is read at its default; omicron calls it with False
    assert "xi" in found["ran"] and "omicron" in found["undecided"]
    # pi's configuration class derives from an alias of the base class: is_decoder is its default
    assert "pi" in found["skipped"]
    assert "resh" in found["skipped"]  # getattr(config, ...) in its tester changes nothing
    # chi's and psi's get_config set is_decoder on the configuration they built before returning it
    assert "chi" in found["ran"] and "psi" in found["skipped"]
    # omega's and digamma's get_config ignore the parts they are handed: the call passes any
    assert "omega" in found["ran"] and "digamma" in found["skipped"]


def test_a_configuration_built_with_the_inputs_has_the_names_it_is_given(results):
    """tau and upsilon have no get_config: to_dict() holds the class's names and those passed."""
    found = verdicts(results, "test_encoder_keys")
    assert "tau" in found["skipped"] and "upsilon" in found["ran"]


def test_a_dict_the_tester_spreads_into_its_configuration_is_read_item_by_item(results):
    """yot's get_config passes ``**self.config_kwargs`` holding ``encoder_layers`` and is_decoder=True;
    tsadi's holds ``hidden_size`` and its ``__init__`` parameter is_decoder (False)."""
    assert "yot" in verdicts(results, "test_encoder_keys")["skipped"]
    assert "tsadi" in verdicts(results, "test_encoder_keys")["ran"]
    found = verdicts(results, "test_decoder")
    assert "yot" in found["ran"] and "tsadi" in found["skipped"]
