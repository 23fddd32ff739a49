import unittest

from ..tiny_bert.test_modeling_tiny_bert import TinyBertModelTest


class TinyDistilBertModelTest(TinyBertModelTest, unittest.TestCase):
    test_resize_embeddings = True
