import unittest

from ...test_modeling_common import ModelTesterMixin


class TinyBertModelTester:
    def __init__(self, parent, is_training=True):
        self.parent = parent
        self.is_training = is_training


class TinyBertModelTest(ModelTesterMixin, unittest.TestCase):
    test_resize_embeddings = False

    def setUp(self):
        self.model_tester = TinyBertModelTester(self, is_training=False)

    def test_attention_outputs(self):
        # TinyBert returns attentions only from its last layer
        pass
