import unittest


class TinyTokenizerTest(unittest.TestCase):
    def test_round_trip(self):
        self.assertEqual("a", "a")
