"""Common tests written under ``@parameterized.expand``: pytest runs one method per parameter,
named ``<test>_<index>[_<first argument>]``, and the test's own name only when a decorator above
``expand`` left something callable there. A model's test class overrides single cases under those
names, or expands the test again. The pair is skipped only when every case pytest runs is.

Found against pytest on the 2026-03-30 snapshot: MiniMax and VoxtralRealtime override both cases
of ``test_assisted_decoding_matches_greedy_search`` (``_0_random``, ``_1_same``) with a skip, and
the scanner called the pair ran.
"""

import libcst as cst
import pytest

from model_debugging.skips.parse.expansion import read_expansion
from model_debugging.skips.parse.rules.base import Context
from tests.skips.conftest import verdicts

COMMON = """
import unittest

import pytest
from parameterized import parameterized


class ModelTesterMixin:
    @parameterized.expand([("random",), ("same",)])
    def test_assisted(self, assistant_type):
        run()

    @pytest.mark.generate
    @parameterized.expand([("greedy", 1), ("beam search", 2)])
    def test_embeds(self, _, num_beams):
        run()

    @parameterized.expand(PARAMETERS)
    def test_sdpa(self, name, dtype):
        run()
"""

MODEL = """
import unittest

from parameterized import parameterized
from ...test_modeling_common import ModelTesterMixin


class {name}ModelTest(ModelTesterMixin, unittest.TestCase):
{body}
"""


def _skipped(method: str, reason: str) -> str:
    """A model's override of ``method`` that always skips."""
    return f'\n    @unittest.skip(reason="{reason}")\n    def {method}(self):\n        pass\n'


# each model's class body: what it overrides
BODIES = {
    # both cases of test_assisted skipped: the pair is skipped (MiniMax)
    "every_case": _skipped("test_assisted_0_random", "no crop() on this cache")
    + _skipped("test_assisted_1_same", "no crop() on this cache"),
    # one case skipped, the other runs the common body
    "one_case": _skipped("test_embeds_1_beam_search", "no beam search")
    + _skipped("test_assisted_1_same", "only the last case"),
    # a skip above the model's own expand skips only what is left under the name: its cases run
    "skip_above": """
    @unittest.skip(reason="not worth fixing")
    @parameterized.expand([("random",), ("same",)])
    def test_assisted(self, assistant_type):
        self.assertTrue(assistant_type)
""",
    # expanded again with the skip below expand: every case skips
    "skip_below": """
    @parameterized.expand([("random",), ("same",)])
    @unittest.skip(reason="no assisted decoding")
    def test_assisted(self, assistant_type):
        pass
""",
    # a plain override of the name: it skips, the common cases it inherits still run
    "plain_override": _skipped("test_assisted", "the name only"),
    # cases whose names the parameters do not give: 0 and 1 overridden, maybe more exist
    "unknown_cases": _skipped("test_sdpa_0_fp16", "first") + _skipped("test_sdpa_1_fp32", "second"),
    # case 3 overridden: cases 0 to 2 exist and run the common body
    "unknown_gap": _skipped("test_sdpa_3_bf16", "the fourth"),
}


@pytest.fixture
def results(make_repo, scan):
    files = {"tests/test_modeling_common.py": COMMON}
    for model, body in BODIES.items():
        name = "".join(part.title() for part in model.split("_"))
        files[f"tests/models/{model}/test_modeling_{model}.py"] = MODEL.format(name=name, body=body)
    return scan(make_repo(files))


def test_every_case_overridden_with_a_skip_is_skipped(results):
    outcome = verdicts(results, "test_assisted")
    assert "every_case" in outcome["skipped"]
    reasons = [skip["reason"] for skip in results["test_assisted"]["skips"] if skip["model"] == "every_case"]
    assert reasons == ["no crop() on this cache"]


def test_a_case_left_to_the_common_body_runs(results):
    outcome = verdicts(results, "test_assisted")
    assert {"one_case", "skip_above", "plain_override"} <= set(outcome["ran"])
    assert "one_case" in verdicts(results, "test_embeds")["ran"]


def test_a_skip_below_the_models_own_expand_skips_every_case(results):
    assert "skip_below" in verdicts(results, "test_assisted")["skipped"]


def test_a_pytest_mark_above_expand_leaves_a_no_op_that_counts_as_skipped(make_repo, scan):
    """``@pytest.mark.generate`` over ``expand``'s None: pytest collects it and it passes doing
    nothing, which the scanner reports as it does a no-op override (skipped by design)."""
    body = _skipped("test_embeds_0_greedy", "no greedy") + _skipped(
        "test_embeds_1_beam_search", "no beam search"
    )
    repo = make_repo(
        {
            "tests/test_modeling_common.py": COMMON,
            "tests/models/solo/test_modeling_solo.py": MODEL.format(name="Solo", body=body),
        }
    )
    results = scan(repo)
    assert verdicts(results, "test_embeds")["skipped"] == ["solo"]
    skip = results["test_embeds"]["skips"][0]
    assert skip["kind"] == "noop_override"
    assert skip["reason"].endswith("runs nothing; its cases skip: no greedy")


def test_overridden_cases_of_parameters_that_are_not_literal(results):
    outcome = verdicts(results, "test_sdpa")
    assert "unknown_cases" in outcome["undecided"]  # a third case may exist, or not
    assert "unknown_gap" in outcome["ran"]  # cases 0 to 2 exist: they run the body
    assert "every_case" in outcome["ran"]  # nothing overridden


def _expansion(source: str):
    function = cst.parse_module(source).body[0]
    return read_expansion(function, Context({}, 1))


@pytest.mark.parametrize(
    ("decorator", "names"),
    [
        ('[("random",), ("same",)]', ("t_0_random", "t_1_same")),
        ('[("beam search", 2), ("a-b.c", 1)]', ("t_0_beam_search", "t_1_a_b_c")),
        ("[True, False, None]", ("t_0", "t_1", "t_2")),
        ("[(1,)] * 1 + [(2,)]", None),
        ("[" + ", ".join(f"({index},)" for index in range(11)) + "]", tuple(f"t_{i:02}" for i in range(11))),
        ("[(name, 1) for name in NAMES]", None),
        ('[("x",)], name_func=custom', None),
        ("[(flag(),)]", None),
    ],
)
def test_case_names_follow_parameterized(decorator, names):
    expansion, _ = _expansion(f"@parameterized.expand({decorator})\ndef t(self, *args):\n    run()\n")
    assert expansion.cases == names


def test_what_the_decorators_above_expand_leave_under_the_name():
    bare, case = _expansion("@parameterized.expand([1])\n@unittest.skip('x')\ndef t(self, v):\n    run()\n")
    assert (bare.base_runs, bare.base_skip) == (False, None)
    assert [cst.Module([]).code_for_node(item.decorator) for item in case.decorators] == [
        "unittest.skip('x')"
    ]
    marked, _ = _expansion("@pytest.mark.generate\n@parameterized.expand([1])\ndef t(self, v):\n    run()\n")
    assert marked.base_runs
    skipped, case = _expansion(
        "@unittest.skip('no')\n@parameterized.expand([1])\ndef t(self, v):\n    run()\n"
    )
    assert skipped.base_skip.reason == "no" and not skipped.base_runs and not case.decorators
    plain, _ = _expansion("@slow\n@parameterized.expand([1])\ndef t(self, v):\n    run()\n")
    assert (plain.base_runs, plain.base_skip) == (False, None)
    assert _expansion("@unittest.skip('x')\ndef t(self):\n    run()\n")[0] is None


AGREEMENT_COMMON = """
import unittest

from parameterized import parameterized

SIDES = ("left",)
PARAMETERIZATION = [
    (f"{dtype}_pad_{side}{'' if mask else '_no_mask'}", *(dtype, side, mask))
    for dtype in ("fp16", "fp32")
    for side in SIDES
    for mask in (True, False)
] + [("fp32_extra", "fp32", "left", True)]
REBOUND = [("early",)]


class ModelTesterMixin:
    @parameterized.expand(PARAMETERIZATION)
    def test_sdpa(self, name, dtype, side, mask):
        self.assertTrue(name)

    @parameterized.expand(REBOUND)
    def test_rebound(self, name):
        self.assertTrue(name)


REBOUND = [("late",), ("later",)]  # after the class: its cases were made from the list above
"""
SDPA_CASES = ["0_fp16_pad_left", "1_fp16_pad_left_no_mask", "2_fp32_pad_left", "3_fp32_pad_left_no_mask"]
AGREEMENT_BODIES = {
    "every_sdpa": "".join(_skipped(f"test_sdpa_{case}", "no sdpa") for case in [*SDPA_CASES, "4_fp32_extra"]),
    "four_sdpa": "".join(_skipped(f"test_sdpa_{case}", "no sdpa") for case in SDPA_CASES),
    "rebound": _skipped("test_rebound_0_early", "the one case"),
}


def test_cases_computed_from_module_constants_agree_with_pytest(tmp_path):
    """The parameters of the real ``TEST_EAGER_MATCHES_SDPA_INFERENCE_PARAMETERIZATION``'s shape (a
    comprehension of f-string names and ``*(...)`` unpacked, a list added), and a constant bound
    again after the class: pytest's cases are those of its value when the class was defined."""
    from tests.support.pytest_runs import pytest_verdicts
    from tests.support.scanning import scan_json

    files = {
        "tests/__init__.py": "",
        "tests/models/__init__.py": "",
        "tests/test_modeling_common.py": AGREEMENT_COMMON,
    }
    for model, body in AGREEMENT_BODIES.items():
        name = "".join(part.title() for part in model.split("_"))
        files[f"tests/models/{model}/__init__.py"] = ""
        files[f"tests/models/{model}/test_modeling_{model}.py"] = MODEL.format(name=name, body=body)
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    results, _ = scan_json(tmp_path, cache_dir=tmp_path / "cache", jobs=1)
    cases = pytest_verdicts(tmp_path)  # (model, case) -> (outcome, message)
    for test in ("test_sdpa", "test_rebound"):
        for model in AGREEMENT_BODIES:
            run = [
                outcome
                for (owner, case), (outcome, _) in cases.items()
                if owner == model and case.startswith(f"{test}_")
            ]
            assert run, (model, test)  # pytest collected the cases
            theirs = "ran" if "ran" in run else "skipped"
            assert verdicts(results, test)[theirs].count(model) == 1, (model, test, theirs)
