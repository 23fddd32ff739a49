"""Facts read from the library's configuration classes: what their constructors leave to run time."""

from model_debugging.skips.parse.library.read import read_library_file

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
