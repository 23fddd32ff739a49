"""Configurations written before dataclass fields: their constructors are run on what the tester passes.

As in transformers 4.x, the base class sets its attributes from ``kwargs.pop(name, default)``, a
loop over the generation defaults, property setters (``num_labels``, ``_attn_implementation``), and
the keywords nobody took; each model's configuration hands its own on with ``super().__init__(...)``.
Alpha is a decoder-only model, beta an encoder-decoder one that says so through
``kwargs.setdefault`` (and drops a keyword with ``del kwargs[...]``); gamma's tester passes a
``bos_token_id`` only the run knows, and delta's configuration hands ``self`` to a function the
library does not hold; epsilon changes a list in place, eta catches what a call it does not follow
may raise, theta's property returns from a loop over unknown values, and zeta sets an attribute its
tester's keyword then overrides. What they leave unknown stays undecided, the rest is decided.
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.fixture_sources import PRETRAINED_MODEL, config_tester, generation_test_class

GENERATION = """
class GenerationTesterMixin:
    model_tester = None

    def test_decoder_only(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.is_encoder_decoder:
            self.skipTest(reason="encoder-decoder")

    def test_bos(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.bos_token_id is None:
            self.skipTest(reason="no bos")

    def test_labels(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if config.num_labels != 2 or config.id2label[1] != "LABEL_1" or config.max_length != 20:
            self.skipTest(reason="labels")

    def test_has(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if not hasattr(config, "sliding_window"):
            self.skipTest(reason="no sliding window")

    def test_kept(self):
        config, _ = self.model_tester.prepare_config_and_inputs_for_common()
        if not getattr(config, "extra", False):
            self.skipTest(reason="no extra")
"""

BASE = """
class PretrainedConfig:
    model_type = ""
    attribute_map = {}
    sub_configs = {}

    def __init__(self, **kwargs):
        self.return_dict = kwargs.pop("return_dict", True)
        self.is_encoder_decoder = kwargs.pop("is_encoder_decoder", False)
        for parameter_name, default_value in self._get_global_generation_defaults().items():
            setattr(self, parameter_name, kwargs.pop(parameter_name, default_value))
        self.id2label = kwargs.pop("id2label", None)
        if self.id2label is not None:
            self.id2label = {int(key): value for key, value in self.id2label.items()}
        else:
            self.num_labels = kwargs.pop("num_labels", 2)
        self.bos_token_id = kwargs.pop("bos_token_id", None)
        self._attn_implementation = kwargs.pop("attn_implementation", None)
        for key, value in kwargs.items():
            try:
                setattr(self, key, value)
            except AttributeError as err:
                raise err

    @property
    def num_labels(self):
        return len(self.id2label)

    @num_labels.setter
    def num_labels(self, num_labels):
        if not hasattr(self, "id2label") or self.id2label is None or len(self.id2label) != num_labels:
            self.id2label = {i: f"LABEL_{i}" for i in range(num_labels)}

    @property
    def _attn_implementation(self):
        return self._attn_implementation_internal

    @_attn_implementation.setter
    def _attn_implementation(self, value):
        self._attn_implementation_internal = value
        for key in self.sub_configs:
            sub_config = getattr(self, key, None)
            if sub_config is not None:
                sub_config._attn_implementation = value

    @staticmethod
    def _get_global_generation_defaults():
        return {"max_length": 20, "num_beams": 1}
"""

CONFIGS = {
    "alpha": """
    def __init__(self, hidden_size=8, bos_token_id=1, **kwargs):
        self.hidden_size = hidden_size
        super().__init__(bos_token_id=bos_token_id, **kwargs)
""",
    "beta": """
    def __init__(self, hidden_size=8, **kwargs):
        self.hidden_size = hidden_size
        kwargs.setdefault("is_encoder_decoder", True)
        if "decoder" in kwargs:
            del kwargs["decoder"]
        super().__init__(**kwargs)
""",
    "gamma": """
    def __init__(self, hidden_size=8, bos_token_id=1, **kwargs):
        self.hidden_size = hidden_size
        super().__init__(bos_token_id=bos_token_id, **kwargs)
""",
    "delta": """
    def __init__(self, hidden_size=8, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.sliding_window = None
        configure_elsewhere(self)
""",
    "epsilon": """
    def __init__(self, hidden_size=8, **kwargs):
        flags = [False]
        flags.append(True)
        kwargs["is_encoder_decoder"] = flags[-1]
        super().__init__(**kwargs)
""",
    "eta": """
    def __init__(self, hidden_size=8, **kwargs):
        encoder_decoder = False
        try:
            validate_size(hidden_size)
        except ValueError:
            encoder_decoder = True
        super().__init__(is_encoder_decoder=encoder_decoder, **kwargs)
""",
    "theta": """
    def __init__(self, hidden_size=8, sizes=None, **kwargs):
        self.sizes = sizes
        super().__init__(**kwargs)

    @property
    def extra(self):
        for size in self.sizes:
            if size > 2:
                return True
        return False
""",
    "zeta": """
    def __init__(self, hidden_size=8, **kwargs):
        self.extra = False
        self.sliding_window = None
        super().__init__(**kwargs)
""",
}
PASSED = {
    "alpha": "extra=True",
    "beta": "bos_token_id=None",
    "gamma": "bos_token_id=pick_one()",
    "delta": "",
    "epsilon": "",
    "eta": "",
    "theta": "sizes=pick_one()",
    "zeta": "extra=True",
}


def constructor_tree(configs: dict[str, str], passed: dict[str, str]) -> tuple[dict, dict]:
    """The test files and library of models whose configurations subclass ``BASE`` with the
    ``__init__`` of ``configs``, each tester passing ``hidden_size=4`` and its ``passed`` keywords."""
    library = {
        "src/transformers/modeling_utils.py": PRETRAINED_MODEL,
        "src/transformers/configuration_utils.py": BASE,
    }
    files = {"tests/generation/test_utils.py": GENERATION}
    for model, init in configs.items():
        title = model.title()
        library[f"src/transformers/models/{model}/configuration_{model}.py"] = (
            "from ...configuration_utils import PretrainedConfig\n\n\n"
            f'class {title}Config(PretrainedConfig):\n    model_type = "{model}"\n{init}'
        )
        library[f"src/transformers/models/{model}/modeling_{model}.py"] = (
            f"class {title}Model(PreTrainedModel):\n    config_class = {title}Config\n"
        )
        files[f"tests/models/{model}/test_modeling_{model}.py"] = config_tester(
            title, f"hidden_size=4, {passed.get(model, '')}".rstrip(", ")
        ) + generation_test_class(title)
    return files, library


@pytest.fixture
def results(make_repo, scan):
    files, library = constructor_tree(CONFIGS, PASSED)
    return scan(write_tree(make_repo(files), library))


def test_what_the_base_constructor_pops_is_decided(results):
    assert verdicts(results, "test_decoder_only") == {
        "ran": ["alpha", "gamma", "theta", "zeta"],
        "skipped": ["beta"],
        # delta: handed to a function that may set anything; epsilon: a list changed in place;
        # eta: an exception a call may raise is caught and changes the value
        "undecided": ["delta", "epsilon", "eta"],
    }
    assert verdicts(results, "test_bos") == {
        "ran": ["alpha"],
        "skipped": ["beta", "epsilon", "eta", "theta", "zeta"],
        "undecided": ["delta", "gamma"],
    }


def test_a_property_setter_and_a_loop_over_known_values_are_run(results):
    assert verdicts(results, "test_labels") == {
        "ran": ["alpha", "beta", "epsilon", "eta", "gamma", "theta", "zeta"],
        "skipped": [],
        "undecided": ["delta"],
    }


def test_an_attribute_exists_when_the_constructors_set_it(results):
    """delta sets ``sliding_window`` before handing itself to a function the library does not hold:
    its value is unknown then, but it exists."""
    assert verdicts(results, "test_has") == {
        "ran": ["delta", "zeta"],
        "skipped": ["alpha", "beta", "epsilon", "eta", "gamma", "theta"],
        "undecided": [],
    }


def test_keywords_nobody_takes_are_kept_as_attributes(results):
    """zeta sets ``extra`` before its base sets the keywords nobody took: the tester's ``extra=True``
    wins; theta's property returns from a loop over values only the run knows. delta's constructors
    are not seen to set ``extra``: the function handed ``self`` is taken not to add one, as for a
    configuration whose constructors are not run."""
    assert verdicts(results, "test_kept") == {
        "ran": ["alpha", "zeta"],
        "skipped": ["beta", "delta", "epsilon", "eta", "gamma"],
        "undecided": ["theta"],
    }
