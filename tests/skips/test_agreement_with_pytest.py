"""Each collection rule (see docs/design/analyzer_robustness.md) on a small tree, scanned and run by real pytest: the verdicts agree.

For every (model, test) pytest either runs the test in some class of the model (ran), skips it in
every class (skipped, with a message), or never collects it (not applicable). The scanner's
answer, read without importing anything, must be the same, and a skip's reason must be pytest's.
"""

import pytest

from tests.support.pytest_runs import pytest_verdicts

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
    # a skip in a `with` block or a `try` is reached unless the block catches it
    "with_block": (
        f"{HEADER}import tempfile\n\n\nclass WithBlockModelTest{BASES}:\n    def test_forward(self):\n"
        '        with tempfile.TemporaryDirectory() as tmp:\n            self.skipTest("inside a with block")\n'
    ),
    "with_call": (
        f"{HEADER}import tempfile\n\n\nclass WithCallModelTest{BASES}:\n    def test_forward(self):\n"
        "        with tempfile.TemporaryDirectory() as tmp:\n            self.test_training()\n\n"
        '    @unittest.skip("called in a with block")\n    def test_training(self):\n        self.assertTrue(True)\n'
    ),
    "try_finally": (
        f"{HEADER}\n\nclass TryFinallyModelTest{BASES}:\n    def test_forward(self):\n        try:\n"
        '            self.skipTest("inside try/finally")\n        finally:\n            self.assertTrue(True)\n'
    ),
    "try_caught": (
        f"{HEADER}\n\nclass TryCaughtModelTest{BASES}:\n    def test_forward(self):\n        try:\n"
        '            self.skipTest("caught")\n        except Exception:\n            self.assertTrue(True)\n'
    ),
    # a name the module binds once stands for its expression
    "skip_bound": (
        f'{HEADER}\nskip_me = unittest.skip("bound to a name")\n\n\nclass SkipBoundModelTest{BASES}:\n'
        "    @skip_me\n    def test_forward(self):\n        self.assertTrue(True)\n"
    ),
    "mark_bound": (
        f'{HEADER}\nskip_mark = pytest.mark.skip(reason="a mark bound to a name")\n\n\n'
        f"@skip_mark\nclass MarkBoundModelTest{BASES}:\n    pass\n"
    ),
    "constant": (
        f"{HEADER}\nFLAG = True\n\n\nclass ConstantModelTest{BASES}:\n"
        '    @unittest.skipIf(FLAG, "the flag is set")\n    def test_forward(self):\n        self.assertTrue(True)\n\n'
        '    @unittest.skipUnless(not FLAG, "the flag is not unset")\n    def test_training(self):\n'
        "        self.assertTrue(True)\n"
    ),
    "constant_false": (
        f"{HEADER}\nFLAG = False\n\n\nclass ConstantFalseModelTest{BASES}:\n"
        '    @unittest.skipIf(FLAG, "the flag is set")\n    def test_forward(self):\n        self.assertTrue(True)\n'
    ),
    "constant_rebound": (
        f"{HEADER}\nFLAG = True\nFLAG = False\n\n\nclass ConstantReboundModelTest{BASES}:\n"
        '    @unittest.skipIf(FLAG, "the flag was set")\n    def test_forward(self):\n        self.assertTrue(True)\n'
    ),
    # what unittest's loader collects from a class, and attributes set after the class body
    "dunder_skip": (
        f"{HEADER}\n\nclass DunderSkipModelTest{BASES}:\n    __unittest_skip__ = True\n"
        '    __unittest_skip_why__ = "set by hand"\n'
    ),
    "property_test": (
        f"{HEADER}\n\nclass PropertyTestModelTest{BASES}:\n    @property\n    def test_forward(self):\n"
        "        return 1\n"
    ),
    "lambda_test": (
        f"{HEADER}\n\nclass LambdaTestModelTest{BASES}:\n    test_forward = lambda self: self.assertTrue(True)  # noqa: E731\n"
        '    test_training = lambda self: self.skipTest("a lambda that skips")  # noqa: E731\n'
    ),
    # a second name for a def of the body: the same function, collected under both names
    "alias_test": (
        f"{HEADER}\n\nclass AliasTestModelTest{BASES}:\n    def check_runs(self):\n        self.assertTrue(True)\n\n"
        '    def test_alone(self):\n        self.skipTest("an alias skips")\n\n'
        "    test_forward = test_alone\n    test_training = check_runs\n"
    ),
    "bound_after": (
        f"{HEADER}\n\nclass BoundAfterModelTest{BASES}:\n    pass\n\n\n"
        'BoundAfterModelTest.test_forward = unittest.skip("set after the class")(BoundAfterModelTest.test_forward)\n'
        'setattr(BoundAfterModelTest, "test_training", None)\n'
    ),
    "setattr_after": (
        f"{HEADER}\n\nclass SetattrAfterModelTest{BASES}:\n    def test_forward(self):\n"
        '        self.skipTest("replaced below")\n\n\n'
        'setattr(SetattrAfterModelTest, "test_training", unittest.skip("setattr after")(lambda self: None))\n'
        "SetattrAfterModelTest.test_forward = lambda self: self.assertTrue(True)\n"
    ),
    # a function of the module the test calls, which skips
    "helper_function": (
        f'{HEADER}\n\ndef skip_here():\n    raise unittest.SkipTest("the helper says no")\n\n\n'
        f"class HelperFunctionModelTest{BASES}:\n    def test_forward(self):\n        skip_here()\n\n"
        "    def test_training(self):\n        check(self)\n\n\ndef check(test):\n    test.assertTrue(True)\n"
    ),
    # what running the module does before pytest collects it
    "module_skip": (
        f'{HEADER}\npytest.skip("the whole module", allow_module_level=True)\n\n\n'
        f"class ModuleSkipModelTest{BASES}:\n    pass\n"
    ),
    "module_raise": (
        f'{HEADER}\nraise unittest.SkipTest("raised at module level")\n\n\nclass ModuleRaiseModelTest{BASES}:\n    pass\n'
    ),
    "module_skip_unallowed": (
        f'{HEADER}\npytest.skip("an error")\n\n\nclass ModuleSkipUnallowedModelTest{BASES}:\n    pass\n'
    ),
    "mixin_twice": (
        f"{HEADER}\n\nclass MixinTwiceModelTest(ModelTesterMixin, ModelTesterMixin, unittest.TestCase):\n    pass\n"
    ),
    "imports_skipping": (
        f"{HEADER}from ..module_skip import test_modeling_module_skip\n\n\nclass ImportsSkippingModelTest{BASES}:\n"
        "    pass\n"
    ),
    "imports_failing": (
        f"{HEADER}from ..mixin_twice.test_modeling_mixin_twice import ModelTesterMixin as Mixin\n\n\n"
        "class ImportsFailingModelTest(Mixin, unittest.TestCase):\n    pass\n"
    ),
    # a model copied from another whose modeling file still imports the old configuration (LIBRARY)
    "copied": f"{HEADER}from transformers import CopiedModel\n\n\nclass CopiedModelTest{BASES}:\n    pass\n",
    "copied_guarded": (
        f"{HEADER}\ntry:\n    from transformers import CopiedModel\nexcept ImportError:\n    CopiedModel = None\n\n\n"
        f"class CopiedGuardedModelTest{BASES}:\n    pass\n"
    ),
    # a modeling file importing a misspelled name of its configuration (LIBRARY); a test file
    # importing a misspelled name of a configuration module, and one importing it right
    "typo": f"{HEADER}from transformers import TypoModel\n\n\nclass TypoModelTest{BASES}:\n    pass\n",
    "misnamed": (
        f"{HEADER}from transformers.models.copied.configuration_copied import CopiedConfigg\n\n\n"
        f"class MisnamedModelTest{BASES}:\n    pass\n"
    ),
    "named": (
        f"{HEADER}from transformers.models.copied.configuration_copied import CopiedConfig\n\n\n"
        f"class NamedModelTest{BASES}:\n    pass\n"
    ),
    "no_package": f"{HEADER}\n\nclass NoPackageModelTest{BASES}:\n    pass\n",  # no __init__.py: see below
    "no_package_absolute": (
        "import unittest\n\nfrom tests.test_modeling_common import ModelTesterMixin\n\n\n"
        f"class NoPackageAbsoluteModelTest{BASES}:\n    pass\n"
    ),
    # a class that is not a TestCase: pytest collects it by its name; a file by pytest's patterns
    "plain_class": (
        f"{HEADER}\n\nclass TestPlain(ModelTesterMixin):\n    pass\n\n\n"
        'class TestPlainSkips(ModelTesterMixin):\n    @unittest.skip("a skip decorator on a plain test")\n'
        "    def test_forward(self):\n        pass\n\n\n"
        f'@pytest.mark.skip(reason="a mark on a plain class")\nclass TestPlainMarked(ModelTesterMixin):\n    pass\n\n\n'
        "class PlainNotCollected(ModelTesterMixin):\n    pass\n\n\n"
        "class TestPlainWithInit(ModelTesterMixin):\n    def __init__(self):\n        pass\n"
    ),
    "plain_marked": (
        f'{HEADER}\n\n@pytest.mark.skip(reason="a mark on a plain class")\nclass TestPlainMarked(ModelTesterMixin):\n'
        "    pass\n"
    ),
    "plain_skips": (
        f'{HEADER}\n\n@unittest.skip("ignored on a plain class")\nclass TestPlainSkips(ModelTesterMixin):\n'
        '    @unittest.skip("a skip decorator on a plain test")\n    def test_forward(self):\n        pass\n'
    ),
    "plain_not_collected": f"{HEADER}\n\nclass PlainModelTest(ModelTesterMixin):\n    pass\n",
    "suffix_file": f"{HEADER}\n\nclass SuffixFileModelTest{BASES}:\n    pass\n",  # modeling_suffix_file_test.py
    # the skip after an early return is reached only when the condition is false
    "early_return": (
        f"{HEADER}\n\nclass EarlyReturnModelTest{BASES}:\n    supports_it = True\n\n    def test_forward(self):\n"
        "        if self.supports_it:\n            found = super().test_forward()\n            return found\n"
        '        self.skipTest("not supported")\n'
    ),
    "early_return_direct": (
        f"{HEADER}\n\nclass EarlyReturnDirectModelTest{BASES}:\n    supports_it = True\n\n"
        "    def test_forward(self):\n        if self.supports_it:\n            return super().test_forward()\n"
        '        self.skipTest("not supported")\n'
    ),
    "early_return_not_taken": (
        f"{HEADER}\n\nclass EarlyReturnNotTakenModelTest{BASES}:\n    supports_it = False\n\n"
        "    def test_forward(self):\n        if self.supports_it:\n            return super().test_forward()\n"
        '        self.skipTest("not supported")\n'
    ),
}


# The library the tests import, from src/ (the checkout's conftest.py puts it first on sys.path, as
# transformers' does), with a lazy __init__ importing a name's module when it is asked for.
LIBRARY = {
    "conftest.py": 'import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).parent / "src"))\n',
    "src/transformers/__init__.py": (
        "import importlib\n\n"
        '_DEFINED_IN = {"CopiedModel": "models.copied.modeling_copied", "TypoModel": "models.typo.modeling_typo"}\n\n\n'
        "def __getattr__(name):\n    if name not in _DEFINED_IN:\n        raise AttributeError(name)\n"
        '    return getattr(importlib.import_module(f"{__name__}.{_DEFINED_IN[name]}"), name)\n'
    ),
    "src/transformers/modeling_utils.py": "class PreTrainedModel:\n    pass\n",
    "src/transformers/models/__init__.py": "",
    "src/transformers/models/copied/__init__.py": "",
    "src/transformers/models/copied/configuration_copied.py": "class CopiedConfig:\n    pass\n",
    "src/transformers/models/copied/modeling_copied.py": (
        "from ...modeling_utils import PreTrainedModel\nfrom .configuration_original import CopiedConfig\n\n\n"
        "class CopiedModel(PreTrainedModel):\n    config_class = CopiedConfig\n"
    ),
    "src/transformers/models/typo/__init__.py": "",
    "src/transformers/models/typo/configuration_typo.py": "class TypoConfig:\n    pass\n",
    "src/transformers/models/typo/modeling_typo.py": (
        "from ...modeling_utils import PreTrainedModel\nfrom .configuration_typo import TypoConfigg\n\n\n"
        "class TypoModel(PreTrainedModel):\n    config_class = TypoConfigg\n"
    ),
}


# model folders without an __init__.py: a relative import there fails, an absolute one works
NOT_PACKAGES = {"no_package", "no_package_absolute"}
# test files named otherwise than test_modeling_<model>.py
FILE_NAMES = {"suffix_file": "modeling_suffix_file_test.py"}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("agreement")
    files = {
        "tests/__init__.py": "",
        "tests/models/__init__.py": "",
        "tests/test_modeling_common.py": COMMON,
        **LIBRARY,
    }
    for model, text in MODELS.items():
        if model not in NOT_PACKAGES:
            files[f"tests/models/{model}/__init__.py"] = ""
        files[f"tests/models/{model}/{FILE_NAMES.get(model, f'test_modeling_{model}.py')}"] = text
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def test_the_scanner_agrees_with_pytest_on_every_pair(tree, tmp_path):
    from tests.support.scanning import scan_json

    results, errors = scan_json(tree, cache_dir=tmp_path / "cache", jobs=1)
    assert {error["path"].split("/")[2]: error["line"] for error in errors} == {
        "copied": 6,  # at its import of CopiedModel, whose module imports a missing one
        "typo": 6,  # at its import of TypoModel, whose module imports a name its configuration lacks
        "misnamed": 6,  # at its import of a name the configuration module lacks
        "imports_failing": 6,  # at its import of mixin_twice, which pytest cannot import
        "mixin_twice": 8,
        "module_skip_unallowed": 7,
        "no_package": 5,
    }
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
