from .generation.test_utils import GenerationTesterMixin
from .test_modeling_common import ModelTesterMixin


class CausalLMModelTester:
    def __init__(self, parent, batch_size=2, is_training=True, hidden_size=16):
        self.parent = parent
        self.batch_size = batch_size
        self.is_training = is_training
        self.hidden_size = hidden_size


class CausalLMModelTest(ModelTesterMixin, GenerationTesterMixin):
    model_tester_class = None

    def setUp(self):
        self.model_tester = self.model_tester_class(self)
