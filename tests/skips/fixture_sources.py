"""Pieces of the fake checkouts that the run-time fixture tests write: the base model class of the
library and a model's test class running ``GenerationTesterMixin`` with its tester."""

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
