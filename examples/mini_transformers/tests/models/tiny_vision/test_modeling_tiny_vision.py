import unittest

import pytest

from ...test_modeling_common import ModelTesterMixin


class TinyVisionModelTester:
    is_training = True

    def __init__(self, parent):
        self.parent = parent


class TinyVisionModelTest(ModelTesterMixin, unittest.TestCase):
    has_attentions = False
    test_resize_embeddings = False

    def setUp(self):
        self.model_tester = TinyVisionModelTester(self)

    def test_inputs_embeds(self):
        self.skipTest(reason="TinyVision has no input embeddings")


class TinyVisionBackboneTest(ModelTesterMixin, unittest.TestCase):
    has_attentions = False
    test_resize_embeddings = False

    def setUp(self):
        self.model_tester = TinyVisionModelTester(self)

    def test_inputs_embeds(self):
        pytest.skip("the backbone has no input embeddings either")

    def test_training(self):
        """Backbones are frozen: nothing to train."""
