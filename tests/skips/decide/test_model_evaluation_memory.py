"""What one model's evaluation leaves behind when the next begins."""

from model_debugging.skips.decide import per_model
from model_debugging.skips.decide.runtime_checks import RuntimeChecks

COMMON = """
class ModelTesterMixin:
    all_model_classes = ()

    def test_sdpa(self):
        for model_class in self.all_model_classes:
            if not model_class._supports_sdpa:
                self.skipTest(reason="no SDPA")
"""

MODEL = """
import unittest

from ...test_modeling_common import ModelTesterMixin


class {name}ModelTester:
    def __init__(self, parent, batch_size=2):
        self.parent = parent


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = ({name}Model,)

    def setUp(self):
        self.model_tester = {name}ModelTester(self)
"""


def test_a_models_test_file_trees_are_dropped_before_the_collection_after_it(make_repo, scan, monkeypatch):
    """The run-time checks read a model's test files with ``ast`` (its tester); those trees serve that
    model only and are dropped before the collection that follows it, which would otherwise walk
    every node of them once more."""
    repo = make_repo(
        {
            "tests/test_modeling_common.py": COMMON,
            **{
                f"tests/models/{name}/test_modeling_{name}.py": MODEL.format(name=name.title())
                for name in "ab"
            },
        }
    )
    checks: list[RuntimeChecks] = []
    parsed: list[str] = []
    held: list[list[str]] = []
    read = RuntimeChecks._test_file

    def test_file(self, path):
        checks.append(self)
        parsed.append(path)
        return read(self, path)

    set_aside = per_model._set_aside_survivors

    def set_aside_survivors():
        held.append(
            [path for check in checks[-1:] for path, tree in check._trees.items() if "/models/" in path]
        )
        set_aside()

    monkeypatch.setattr(RuntimeChecks, "_test_file", test_file)
    monkeypatch.setattr(per_model, "_set_aside_survivors", set_aside_survivors)
    results = scan(repo, jobs=1)
    assert "tests/models/a/test_modeling_a.py" in parsed  # the trees were read...
    assert held == [[], []]  # ...and none was held when each model's collection came
    assert results["test_sdpa"]["models_undecided"] == ["a", "b"]
