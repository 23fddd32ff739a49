import unittest

from ...test_modeling_common import ModelTesterMixin


@unittest.skip("TinyRetired is deprecated; its tests are kept for reference")
class TinyRetiredModelTest(ModelTesterMixin, unittest.TestCase):
    pass
