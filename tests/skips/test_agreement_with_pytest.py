"""Each collection rule (see docs/design/analyzer_robustness.md) on a small tree, scanned and run by real pytest: the verdicts agree.

For every (model, test) pytest either runs the test in some class of the model (ran), skips it in
every class (skipped, with a message), or never collects it (not applicable). The scanner's
answer, read without importing anything, must be the same, and a skip's reason must be pytest's.
"""

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict

import pytest

COMMON = """
import unittest


class ModelTesterMixin:
    def test_forward(self):
        self.assertTrue(True)

    def test_training(self):
        self.assertTrue(True)
"""
HEADER = "import unittest\n\nimport pytest\n\nfrom ...test_modeling_common import ModelTesterMixin\n"
BASES = "(ModelTesterMixin, unittest.TestCase)"
MODELS = {
    "plain": f"{HEADER}\n\nclass PlainModelTest{BASES}:\n    pass\n",
    "shadowing": f"{HEADER}\n\nclass ShadowingModelTest{BASES}:\n    test_forward = None\n",
    "shadowing_after": (
        f"{HEADER}\n\nclass ShadowingAfterModelTest{BASES}:\n    pass\n\n\nShadowingAfterModelTest.test_forward = False\n"
    ),
    "dunder_test": f"{HEADER}\n\nclass DunderTestModelTest{BASES}:\n    __test__ = False\n",
    "dunder_base": (
        f"{HEADER}\n\nclass Base{BASES}:\n    __test__ = False\n\n\n"
        "class DunderBaseModelTest(Base):\n    __test__ = True\n\n\nclass Hidden(Base):\n    pass\n"
    ),
    "setup_class": (
        f"{HEADER}\n\nclass SetupClassModelTest{BASES}:\n    @classmethod\n    def setUpClass(cls):\n"
        '        raise unittest.SkipTest("no setup")\n'
    ),
    "setup": f'{HEADER}\n\nclass SetupModelTest{BASES}:\n    def setUp(self):\n        self.skipTest("setup says no")\n',
    "setup_by_name": (
        f"{HEADER}\n\nclass SetupByNameModelTest{BASES}:\n    def setUp(self):\n        self.skip_some()\n\n"
        '    def skip_some(self):\n        for prefix in ["test_train", "test_beam"]:\n'
        '            if self._testMethodName.startswith(prefix):\n                self.skipTest(reason="not for this one")\n'
    ),
    "class_mark": f'{HEADER}\n\nclass ClassMarkModelTest{BASES}:\n    pytestmark = pytest.mark.skip(reason="class mark")\n',
    "module_mark": (
        f'{HEADER}\npytestmark = [pytest.mark.skip(reason="module mark")]\n\n\n'
        f"class ModuleMarkModelTest{BASES}:\n    pass\n"
    ),
    "post_hoc": (
        f'{HEADER}\n\nclass PostHocModelTest{BASES}:\n    pass\n\n\nPostHocModelTest = unittest.skip("after the body")(PostHocModelTest)\n'
    ),
    "redefined": (
        f'{HEADER}\n\nclass RedefinedModelTest{BASES}:\n    @unittest.skip("first one")\n    def test_forward(self):\n'
        f"        pass\n\n\nclass RedefinedModelTest{BASES}:\n    pass\n"
    ),
    "star": "import unittest\n\nfrom ...test_modeling_common import *\n\n\nclass StarModelTest(ModelTesterMixin, unittest.TestCase):\n    pass\n",
    "deleted": (
        f'{HEADER}\n\nclass DeletedModelTest{BASES}:\n    @unittest.skip("deleted below")\n    def test_forward(self):\n'
        "        pass\n\n    del test_forward\n"
    ),
    "latin1": (
        f'# -*- coding: latin-1 -*-\n{HEADER}\n\nclass Latin1ModelTest{BASES}:\n    @unittest.skip("caf\xe9")\n'
        "    def test_forward(self):\n        pass\n"
    ).encode("latin-1"),
    "carriage_returns": (
        f'{HEADER}\n\nclass CarriageReturnsModelTest{BASES}:\n    @unittest.skip("old Mac")\n'
        "    def test_training(self):\n        pass\n"
    )
    .replace("\n", "\r")
    .encode(),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("agreement")
    files = {"tests/__init__.py": "", "tests/models/__init__.py": "", "tests/test_modeling_common.py": COMMON}
    for model, text in MODELS.items():
        files[f"tests/models/{model}/__init__.py"] = ""
        files[f"tests/models/{model}/test_modeling_{model}.py"] = text
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def pytest_verdicts(root) -> dict[tuple[str, str], tuple[str, str]]:
    """(model, test) -> ("ran" | "skipped", pytest's skip message) from a real pytest run."""
    report = root / "junit.xml"
    settings = root / "pytest.ini"  # an empty one of its own, so no project settings leak in
    settings.write_text("[pytest]\n")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/models",
        "-q",
        "-p",
        "no:cacheprovider",
        "-c",
        str(settings),
    ]
    subprocess.run([*command, "--rootdir", str(root), f"--junitxml={report}"], cwd=root, capture_output=True)
    outcomes: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for case in ElementTree.parse(report).iter("testcase"):
        model = case.get("classname").split(".")[2]
        skipped = case.find("skipped")
        outcome = ("skipped", skipped.get("message", "")) if skipped is not None else ("ran", "")
        outcomes[model, case.get("name")].append(outcome)
    verdicts = {}
    for pair, found in outcomes.items():
        ran = [outcome for outcome in found if outcome[0] == "ran"]
        verdicts[pair] = ran[0] if ran else found[0]
    return verdicts


def test_the_scanner_agrees_with_pytest_on_every_pair(tree, tmp_path):
    from tests.support.scanning import scan_json

    results, errors = scan_json(tree, cache_dir=tmp_path / "cache", jobs=1)
    assert errors == []
    truth = pytest_verdicts(tree)
    assert len(truth) > 10  # pytest did run
    for model in MODELS:
        for test in ("test_forward", "test_training"):
            entry = results[test]
            if model in entry["models_ran"]:
                ours = ("ran", "")
            elif model in entry["models_skipped"]:
                ours = (
                    "skipped",
                    next(r.split(": ", 1)[1] for r in entry["reasons_skipped"] if r.startswith(model)),
                )
            else:
                assert model in entry["models_not_applicable"], (model, test)
                ours = None
            theirs = truth.get((model, test))
            if theirs is not None and theirs[0] == "skipped":
                theirs = ("skipped", theirs[1].removeprefix("Skipped: "))
            assert ours == theirs, (model, test)


def test_lines_are_counted_as_python_counts_them(tree, tmp_path):
    from tests.support.scanning import scan_json

    results, _ = scan_json(tree, cache_dir=tmp_path / "cache", jobs=1)
    skip = next(skip for skip in results["test_training"]["skips"] if skip["model"] == "carriage_returns")
    assert skip["line"] == 10  # the `def` line, with `\r` alone ending each line
