"""The expressions of configuration constructors, run on the interpreter: arithmetic and a negative
default, ``Base.__init__(self, ...)``, a method handed ``**`` dicts and ``**kwargs``, ``dict(...)``
and ``isinstance`` decide what the base pops; an f-string with a part only the run knows stays
unknown (it is not the text a skip reason would print), and so does ``unknown or True`` (true, but
not necessarily ``True``)."""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.models.test_runtime_config_constructors import constructor_tree

CONFIGS = {
    "iota": """
    def __init__(self, hidden_size=8, heads=2, offset=-1, **kwargs):
        self.head_dim = hidden_size // heads * 3
        PretrainedConfig.__init__(self, is_encoder_decoder=self.head_dim == 6 and offset < 0, **kwargs)
""",
    "kappa": """
    def __init__(self, hidden_size=8, **kwargs):
        label = f"size {pick_one()}"
        super().__init__(**kwargs)
        self.is_encoder_decoder = label == "size <unevaluated: pick_one()>"
""",
    "mu": """
    def __init__(self, hidden_size=8, **kwargs):
        settings = dict(encoder=isinstance(hidden_size, int), **{"decoder": True})
        self._apply(**settings, **kwargs)

    def _apply(self, encoder=False, decoder=False, **kwargs):
        super().__init__(is_encoder_decoder=encoder and decoder, **kwargs)
""",
    "xi": """
    def __init__(self, hidden_size=8, **kwargs):
        flag = pick_one() or True
        super().__init__(is_encoder_decoder=flag is True, **kwargs)
""",
    "nu": """
    def __init__(self, hidden_size=8, **kwargs):
        super().__init__(is_encoder_decoder=isinstance(hidden_size, dict) or hidden_size * 2 != 8, **kwargs)
""",
}


@pytest.fixture
def results(make_repo, scan):
    files, library = constructor_tree(CONFIGS, {})
    return scan(write_tree(make_repo(files), library))


def test_the_constructors_expressions_decide_what_the_base_pops(results):
    assert verdicts(results, "test_decoder_only") == {
        "ran": ["nu"],
        "skipped": ["iota", "mu"],
        "undecided": ["kappa", "xi"],
    }
