"""Every rule flags its INVALID examples and none of its VALID ones; reasons are the source's words."""

import textwrap

import libcst as cst
import pytest

from model_debugging.skips.parse.rules import RULES, Context
from model_debugging.skips.parse.test_file import parse_source

HEADER = "import unittest\nimport pytest\nfrom unittest import skip\n\n\nclass SomeTest:\n"
# what HEADER's imports make of these names
ALIASES = {"unittest": "unittest", "pytest": "pytest", "skip": "unittest.skip"}


def _method(snippet: str):
    source = HEADER + textwrap.indent(snippet, "    ") + "\n"
    parsed = parse_source(source, "tests/test_snippet.py")
    assert parsed.error is None, parsed.error
    return parsed.classes[0].methods[0]


def _function(snippet: str) -> cst.FunctionDef:
    module = cst.parse_module(HEADER + textwrap.indent(snippet, "    ") + "\n")
    return module.body[-1].body.body[0]


CASES = [
    pytest.param(rule, snippet, must, id=f"{rule.__name__}-{'INVALID' if must else 'VALID'}-{index}")
    for rule in RULES
    for must, snippets in ((True, rule.INVALID), (False, rule.VALID))
    for index, snippet in enumerate(snippets)
]


def test_every_rule_has_examples_both_ways():
    assert len(RULES) == 8
    for rule in RULES:
        assert rule.__doc__ and rule.INVALID and rule.VALID, rule.__name__


@pytest.mark.parametrize(("rule", "snippet", "must_flag"), CASES)
def test_rule_examples(rule, snippet, must_flag):
    assert bool(rule.check(_function(snippet), Context(ALIASES, 7))) is must_flag


@pytest.mark.parametrize(
    ("snippet", "reason"),
    [
        ('@unittest.skip(reason="a " "b")\ndef test_x(self):\n    run()', "a b"),
        (
            '@pytest.mark.skip(reason=(\n    "multi"\n    " line"\n))\ndef test_x(self):\n    run()',
            "multi line",
        ),
        ("@pytest.mark.skip\ndef test_x(self):\n    run()", "unconditional skip"),
        ('def test_x(self):\n    self.skipTest(f"{self.name} is odd")', "<unevaluated: self.name> is odd"),
        (
            "def test_x(self):\n    self.skipTest(f\"{'SDPA'} off, {2:03d} {{x}} {True!r}\")",
            "SDPA off, 002 {x} True",
        ),
        ('def test_x(self):\n    """Not supported:\n    too big."""', "Not supported: too big."),
        ("def test_x(self):\n    pass  # needs a GPU", "needs a GPU"),
        ("# Not supported by this model\ndef test_x(self):\n    pass", "Not supported by this model"),
        ("def test_x(self):\n    pass", "no-op override"),
        ('@pytest.mark.xfail(reason="uses weight.data")\ndef test_x(self):\n    pass', "uses weight.data"),
    ],
)
def test_reason_is_the_text_written_in_the_source(snippet, reason):
    assert _method(snippet).skip.reason == reason


def test_runtime_conditions_are_conditions_not_skips():
    method = _method(
        "@require_torch_gpu\n@slow\n@unittest.skipIf(not has_cuda(), 'gpu')\n"
        "def test_x(self):\n    if not torch.cuda.is_available():\n        self.skipTest('gpu')\n    run()"
    )
    assert method.skip is None
    assert [condition.text for condition in method.conditions] == [
        "require_torch_gpu",
        "slow",
        "unittest.skipIf(not has_cuda(), 'gpu')",
        "if not torch.cuda.is_available(): skip",
    ]


@pytest.mark.parametrize(
    "literal", ['"abc"', "'it''s'", '"""two\nlines"""', "r'a\\d'", "b'x'", '""', "'\\''"]
)
def test_fast_string_values_match_libcst(literal):
    import libcst as cst

    from model_debugging.skips.parse.rules.nodes import simple_string_value

    node = cst.parse_expression(literal)
    if isinstance(node, cst.SimpleString):
        assert simple_string_value(node) == node.evaluated_value


def test_a_name_the_module_binds_once_stands_for_its_expression():
    source = textwrap.dedent(
        """
        import os
        import unittest

        skip_me = unittest.skip("bound")
        skip = unittest.skip
        needs_env = unittest.skipIf(not os.environ.get("X"), "needs X")
        ON = True
        TWICE = True
        TWICE = False


        class SomeTest(unittest.TestCase):
            @skip_me
            def test_a(self):
                run()

            @skip("an alias")
            def test_b(self):
                run()

            @needs_env
            def test_c(self):
                run()

            @unittest.skipUnless(ON, "only when on")
            def test_d(self):
                run()

            @unittest.skipIf(TWICE, "bound twice")
            def test_e(self):
                run()
        """
    )
    methods = {method.name: method for method in parse_source(source, "tests/test_x.py").classes[0].methods}
    assert methods["test_a"].skip.reason == "bound"
    assert methods["test_b"].skip.reason == "an alias"
    assert (methods["test_c"].skip, [c.text for c in methods["test_c"].conditions]) == (None, ["needs_env"])
    assert (methods["test_d"].skip, methods["test_d"].conditions) == (None, ())
    assert methods["test_e"].skip is None
    assert [c.text for c in methods["test_e"].conditions] == ['unittest.skipIf(TWICE, "bound twice")']
