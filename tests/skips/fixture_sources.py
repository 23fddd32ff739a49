"""Pieces of the fake checkouts that the run-time fixture tests write: the base model class of the
library, a tester whose ``get_config`` passes given keywords, and a model's test class running
``GenerationTesterMixin`` with its tester."""

PRETRAINED_MODEL = """
class PreTrainedModel(nn.Module):
    config_class = None
"""


def generation_test_class(title: str, tested: str = "") -> str:
    """``<title>ModelTest`` over ``tested`` (``<title>Model`` when empty), its tester built in ``setUp``."""
    return f"""

class {title}ModelTest(GenerationTesterMixin, unittest.TestCase):
    all_model_classes = ({tested or title + "Model"},) if is_torch_available() else ()

    def setUp(self):
        self.model_tester = {title}ModelTester(self)
"""


def config_tester(title: str, passed: str) -> str:
    """``<title>ModelTester`` whose ``get_config`` returns ``<title>Config(<passed>)`` and whose inputs
    are empty (``hidden_size=4`` is an ``__init__`` parameter it keeps)."""
    return f"""
import unittest
from transformers import {title}Config, {title}Model
from ...generation.test_utils import GenerationTesterMixin


class {title}ModelTester:
    def __init__(self, parent, hidden_size=4):
        self.parent = parent
        self.hidden_size = hidden_size

    def get_config(self):
        return {title}Config({passed})

    def prepare_config_and_inputs_for_common(self):
        return self.get_config(), {{}}
"""


# ``PreTrainedModel._can_set_attn_implementation`` as the releases write it, with the phrase the
# model's file must hold (``{phrase}``) when it defines an attention module.
ATTENTION_SETTING_BASE = """
    class PreTrainedModel(nn.Module):
        @classmethod
        def _can_set_attn_implementation(cls) -> bool:
            class_file = sys.modules[cls.__module__].__file__
            with open(class_file, "r") as f:
                code = f.read()
            if re.search(r"class \\w+Attention\\(nn.Module\\)", code):
                return "eager_attention_forward" in code and "{phrase}" in code
            else:
                return True
"""
