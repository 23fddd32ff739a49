"""Every way of taking a test out of "ran" is a new skip for the PR check: exit 1, named."""

import pytest

from model_debugging.skips.report.pr_check.command import main

# text appended to bert's test file; lines indented by four spaces land in BertModelTest's body
BYPASSES = {
    "decorator": '\n    @unittest.skip("wip")\n    def test_forward(self):\n        pass\n',
    "shadowing attribute": "\n    test_forward = None\n",
    "__test__ = False": "\n    __test__ = False\n",
    "setUpClass raises SkipTest": (
        '\n    @classmethod\n    def setUpClass(cls):\n        raise unittest.SkipTest("wip")\n'
    ),
    "setUp skips": '\n    def setUp(self):\n        self.skipTest("wip")\n',
    "class pytestmark": '\n    pytestmark = pytest.mark.skip(reason="wip")\n',
    "module pytestmark": '\nimport pytest\npytestmark = [pytest.mark.skip(reason="wip")]\n',
    "decorator applied after the class": '\nBertModelTest = unittest.skip("wip")(BertModelTest)\n',
    "attribute set after the class": "\nBertModelTest.test_forward = None\n",
    "class redefined without the mixin": "\n\nclass BertModelTest(unittest.TestCase):\n    pass\n",
}


@pytest.mark.parametrize("appended", BYPASSES.values(), ids=BYPASSES.keys())
def test_taking_a_never_skipped_test_out_of_ran_is_flagged(checkout, appended, capsys):
    model = checkout / "tests" / "models" / "bert" / "test_modeling_bert.py"
    text = model.read_text()
    if "pytestmark = pytest.mark" in appended:
        text = "import pytest\n" + text
    model.write_text(text + appended)
    assert main(["--repo", str(checkout), "--base", "main"]) == 1
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("test_forward ")]
    assert [row[:2] for row in rows] == [["test_forward", "bert"]]
