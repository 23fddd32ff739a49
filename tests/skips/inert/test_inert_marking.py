"""Which statements of a test may check something: where the markers go, and when none is needed."""

import ast
import textwrap

import pytest

from model_debugging.skips.inert.marking import MARK, HelperChecks, mark_assertions, surely_checks

HELPERS = {
    "check_outputs": "def check_outputs(self, outputs):\n    self.assertIsNotNone(outputs)",
    "prepare": "def prepare(self):\n    return {}",
    "check_via_helper": "def check_via_helper(self):\n    self.check_outputs(None)",
}


def marked(source: str):
    function = ast.parse(textwrap.dedent(source)).body[0]
    helpers = {name: ast.parse(text).body[0] for name, text in HELPERS.items()}
    return mark_assertions(function, HelperChecks(helpers.get))


def marked_lines(source: str) -> list[str]:
    """The marked body, one statement per line with its indentation, markers as ``MARK``."""
    copy = marked(source)
    return (
        [] if copy is None else ast.unparse(copy).replace(f"self.skipTest({MARK!r})", "MARK").splitlines()[1:]
    )


def test_a_check_inside_a_loop_is_marked_where_it_is():
    assert marked_lines(
        """
        def test_x(self):
            for model_class in self.all_model_classes:
                if model_class._keys is None:
                    continue
                self.assertTrue(model_class._keys)
        """
    ) == [
        "    for model_class in self.all_model_classes:",
        "        if model_class._keys is None:",
        "            continue",
        "        MARK",
        "        self.assertTrue(model_class._keys)",
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "assert x",
        "torch.testing.assert_close(a, b)",
        "self.check_outputs(x)",  # a helper of the test files that asserts
        "self.check_via_helper()",  # ... through another helper
        "self.helper_the_test_files_do_not_define()",
        "check(x)",  # a function the test defines, that asserts
        "with pytest.raises(KeyError): x['a']",
    ],
)
def test_statements_that_may_check_something(statement):
    lines = marked_lines(
        f"""
        def test_x(self):
            def check(value):
                assert value
            {statement}
        """
    )
    assert "    MARK" in lines


@pytest.mark.parametrize(
    "statement",
    [
        "self.skipTest('a skip is not a check')",
        "self.prepare()",  # a helper that returns a value
        "self.subTest(x=1)",  # unittest's own method
        "config, inputs = self.model_tester.prepare_config_and_inputs_for_common()",
        "raise unittest.SkipTest('neither')",
        "raise ValueError('a failure path: the test checks that nothing fails')",
        "model(**inputs).loss.backward()",
    ],
)
def test_a_test_that_checks_nothing_is_a_smoke_test_never_inert(statement):
    assert marked(f"def test_x(self):\n    {statement}\n") is None


def test_a_check_at_the_top_before_any_way_out_needs_no_evaluation():
    assert surely_checks(
        marked("def test_x(self):\n    model = build()\n    with ctx():\n        assert model\n")
    )
    assert not surely_checks(
        marked("def test_x(self):\n    if not self.flag:\n        return\n    assert self.flag\n")
    )
    assert not surely_checks(marked("def test_x(self):\n    for c in classes:\n        assert c\n"))
