"""Facts read from the library's configuration classes: what their constructors leave to run time."""

from model_debugging.skips.parse.library.read import read_library_file
from model_debugging.skips.records.literals import NonLiteral

CONFIG = """
class PairConfig(PreTrainedConfig):
    is_encoder_decoder = False
    tie_word_embeddings = True

    def __post_init__(self, **options):
        options["is_encoder_decoder"] = self.text_config.is_encoder_decoder
        super().__post_init__(**options)
"""


def test_a_keyword_the_post_init_passes_on_is_computed_at_run_time():
    """Blip-2's configuration takes is_encoder_decoder from its text part through **kwargs: the class
    default (False) is not what the instance holds, so a skip reading it must stay undecided."""
    (config,) = read_library_file("configuration_pair.py", CONFIG).classes
    assert "is_encoder_decoder" in config.assigned_in_init
    assert "tie_word_embeddings" not in config.assigned_in_init


VALUES = """
class ToyConfig(PreTrainedConfig):
    keys_to_ignore = set()
    layer_types = make_layer_types(4)
    flags = {"a": build(), "b": 1}

    def __init__(self, hidden_size=64, act=ACT2FN["gelu"], **kwargs):
        self.hidden_size = hidden_size
        self.empty = set()
        self.projection = nn.Linear(hidden_size, 2)
        self.act = act
        super().__init__(activation=get_activation("relu"), window=set(), **kwargs)
"""


def test_a_call_is_a_literal_only_when_it_is_an_empty_set():
    """``set()`` is the one call with a literal value; any other call is decided at run time, and a
    class attribute keeps its code."""
    (config,) = read_library_file("configuration_toy.py", VALUES).classes
    attributes = dict(config.attributes)
    assert attributes["keys_to_ignore"] == set()
    assert attributes["layer_types"] == NonLiteral("make_layer_types(4)")
    assert attributes["flags"] == {"a": NonLiteral("build()"), "b": 1}
    assert dict(config.init_defaults) == {"hidden_size": 64, "empty": set(), "window": set()}
    assert {"projection", "act", "activation"} <= set(config.assigned_in_init)
