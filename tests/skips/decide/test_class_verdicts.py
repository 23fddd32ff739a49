"""Verdicts per test class beside the per-model ones: a class that skips a test is seen even when
another class of the model runs it (the model then runs the test, as upstream's fields say)."""

from tests.skips.conftest import verdicts

WHISPER = """
import unittest

from ...test_modeling_common import ModelTesterMixin


class WhisperModelTest(ModelTesterMixin, unittest.TestCase):
    def test_forward(self):
        self.skipTest(reason="needs the decoder inputs")


class WhisperEncoderModelTest(ModelTesterMixin, unittest.TestCase):
    test_resize_embeddings = False
"""

ONE_CLASS = """
import unittest

from ...test_modeling_common import ModelTesterMixin


class BertModelTest(ModelTesterMixin, unittest.TestCase):
    @unittest.skip("not for bert")
    def test_forward(self):
        pass
"""


def test_a_class_that_skips_is_listed_while_another_class_runs_the_test(make_repo, scan):
    repo = make_repo(
        {
            "tests/models/whisper/test_modeling_whisper.py": WHISPER,
            "tests/models/bert/test_modeling_bert.py": ONE_CLASS,
        }
    )
    results = scan(repo)
    forward = results["test_forward"]
    assert verdicts(results, "test_forward") == {"ran": ["whisper"], "skipped": ["bert"], "undecided": []}
    assert forward["classes"] == [  # bert has one class: its verdict is the model's, in `skips`
        {
            "model": "whisper",
            "test_class": "WhisperEncoderModelTest",
            "class_file": "tests/models/whisper/test_modeling_whisper.py",
            "status": "ran",
        },
        {
            "model": "whisper",
            "test_class": "WhisperModelTest",
            "class_file": "tests/models/whisper/test_modeling_whisper.py",
            "status": "skipped",
            "reason": "needs the decoder inputs",
            "kind": "body",
            "file": "tests/models/whisper/test_modeling_whisper.py",
            "line": 7,
        },
    ]
    resize = results["test_resize_tokens_embeddings"]["classes"]
    assert [(entry["test_class"], entry["status"]) for entry in resize] == [
        ("WhisperEncoderModelTest", "skipped"),
        ("WhisperModelTest", "ran"),
    ]
    assert results["test_attention_outputs"]["classes"] == []  # both classes run it: the model says it all
