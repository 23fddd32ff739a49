"""``model_class._can_set_attn_implementation()`` decided by the checkout's own rule.

``PreTrainedModel._can_set_attn_implementation`` reads the model's file: when it defines an
``XAttention(nn.Module)``, the file must hold the phrases the method names. The phrases changed
between releases, so the scanner reads them from the method: ``alpha`` uses the interface as each
release writes it (runs), ``beta`` has an attention module without it (skips), ``gamma`` has no
attention module (runs).
"""

import pytest

from tests.skips.conftest import verdicts, write_tree
from tests.skips.fixture_sources import ATTENTION_SETTING_BASE

COMMON = """
import unittest


class ModelTesterMixin:
    def test_can_set_attention_dynamically(self):
        for model_class in self.all_model_classes:
            if not model_class._can_set_attn_implementation():
                self.skipTest(reason="This model does not support setting its attention dynamically")
"""

MODEL_TEST = """
import unittest
from transformers import {name}Model
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,) if is_torch_available() else ()
"""

# the base method as the 2025 and the 2026 releases write it, and the phrase each one requires
RELEASES = {
    "2025": (
        "ALL_ATTENTION_FUNCTIONS[self.config._attn_implementation]",
        "ALL_ATTENTION_FUNCTIONS[self.config._attn_implementation]",
    ),
    "2026": (
        "ALL_ATTENTION_FUNCTIONS.get_interface(",
        "ALL_ATTENTION_FUNCTIONS.get_interface(self.config._attn_implementation, eager_attention_forward)",
    ),
}


def _library(phrase: str, call: str) -> dict[str, str]:
    return {
        "src/transformers/modeling_utils.py": ATTENTION_SETTING_BASE.format(phrase=phrase),
        "src/transformers/models/alpha/modeling_alpha.py": f"""
            def eager_attention_forward(module, query):
                pass

            class AlphaAttention(nn.Module):
                def forward(self, query):
                    attention_interface = {call}
                    return attention_interface(self, query)

            class AlphaModel(PreTrainedModel):
                pass
        """,
        "src/transformers/models/beta/modeling_beta.py": """
            class BetaAttention(nn.Module):
                def forward(self, query):
                    return query

            class BetaModel(PreTrainedModel):
                pass
        """,
        "src/transformers/models/gamma/modeling_gamma.py": """
            class GammaModel(PreTrainedModel):
                pass
        """,
    }


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_the_checkouts_own_phrases_decide_whether_attention_can_be_set(make_repo, scan, release):
    phrase, call = RELEASES[release]
    files = {"tests/test_modeling_common.py": COMMON}
    for name in ("alpha", "beta", "gamma"):
        files[f"tests/models/{name}/test_modeling_{name}.py"] = MODEL_TEST.format(name=name.title())
    results = scan(write_tree(make_repo(files), _library(phrase, call)))
    assert verdicts(results, "test_can_set_attention_dynamically") == {
        "ran": ["alpha", "gamma"],
        "skipped": ["beta"],
        "undecided": [],
    }
