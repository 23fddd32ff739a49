"""compare, with its defaults and no rename file, on a hand-written Mixtral port (tests/ports/mixtral.py):
the router and the experts are written so differently that none of their calls pairs with the
reference's, and a bug there is placed at the end of the layer, in its mixture-of-experts call."""

import pytest

from tests.compare.port_checks import check_verdict, run_compare
from tests.ports import Style
from tests.ports.mixtral import Bug
from tests.ports.traced import PortTraces

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

ROOT = "MixtralForCausalLM"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return PortTraces(tmp_path_factory.mktemp("mixtral"))


@pytest.mark.parametrize("style", list(Style), ids=str)
@pytest.mark.parametrize("bug", list(Bug), ids=lambda bug: bug.name.lower())
def test_a_bug_in_the_experts_is_placed_in_the_layers_expert_call(traces, style, bug, tmp_path):
    code, result, printed = run_compare(*traces.get("mixtral", style, bug), tmp_path / "result.json")
    check_verdict(result, code, ROOT, None if bug is Bug.NONE else "model.layers.0", printed)
    if (
        bug is not Bug.NONE
    ):  # not "everything recorded in it agrees": its expert call's outputs are not recorded
        assert result["origin_note"].startswith(
            f"the difference is made at the end of {ROOT}.model.layers.0: in its last recorded call "
            f"{ROOT}.model.layers.0.mlp, whose outputs are not recorded (its inputs agree): among its calls "
            f"left unaligned ({ROOT}.model.layers.0.mlp.gate, {ROOT}.model.layers.0.mlp.experts, "
        ), result["origin_note"]


def test_calls_on_one_side_only_are_listed_outermost_with_the_calls_inside(traces, tmp_path):
    """The port's experts (and their projections) pair with nothing: each expert is listed once, with
    a count of its calls, never beside them; the JSON still holds every call."""
    reference, port = traces.get("mixtral", Style.PLAIN, Bug.NONE)
    markdown = tmp_path / "result.md"
    _, result, printed = run_compare(reference, port, tmp_path / "result.json", "--markdown", str(markdown))
    notes = next(line for line in printed.splitlines() if line.startswith("notes: "))
    expert = "Mixtral.layers.0.feed_forward.experts.0"
    assert f"{expert} (and 3 calls inside)" in notes, notes
    assert f"{expert}.w1" not in notes
    listed = markdown.read_text().partition("### Only in the candidate")[2]
    assert f"- `{expert} (and 3 calls inside)`" in listed
    assert f"{expert}.w1" not in listed
    assert {"call": expert, "calls_inside": 3} in result["unmatched_candidate_outermost"]
    assert f"{expert}.w1" in result["unmatched_candidate"]  # every call, as before
    experts = f"{ROOT}.model.layers.0.mlp.experts"
    assert {"call": experts, "calls_inside": 1} in result["unmatched_reference_outermost"]
