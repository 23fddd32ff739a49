"""Ports shaped differently from their reference: a function for a module, an input changed in place."""

import pytest

from model_debugging import ReplayVerdict, compare_traces, model_addition_debugger_context, replay_trace
from tests.replay import small_ports


def trace_model(model, directory, **options):
    with model_addition_debugger_context(
        model, debug_path=directory, do_prune_layers=False, use_repr=False, **options
    ):
        model(small_ports.inputs())
    return directory


@pytest.fixture
def mlp_traces(tmp_path):
    """The reference MLP (a GELU module), and how the function-calling port is traced and compared."""
    reference = small_ports.MLP().eval()
    reference_trace = trace_model(reference, tmp_path / "reference")

    def port_comparison(port, name):
        port_trace = trace_model(port, tmp_path / name, record_functions=["torch.nn.functional.gelu"])
        return compare_traces(reference_trace, port_trace)

    return reference, reference_trace, port_comparison


@pytest.mark.parametrize(
    ("approximate", "verdict"), [("none", ReplayVerdict.CORRECT), ("tanh", ReplayVerdict.WRONG)]
)
def test_a_module_is_replayed_by_the_function_the_port_calls_instead(mlp_traces, approximate, verdict):
    reference, reference_trace, port_comparison = mlp_traces
    port = small_ports.functional_port(reference, approximate)
    result = replay_trace(reference_trace, port, comparison=port_comparison(port, approximate))
    activation = next(call for call in result.modules if call.module_path == "MLP.act")
    # F.gelu runs with the port's own arguments (approximate=...) on the reference's input
    assert (activation.candidate_path, activation.kind, activation.verdict) == ("gelu", "module", verdict)
    if verdict is ReplayVerdict.WRONG:
        found = replay_trace(reference_trace, port, bisect=True, comparison=port_comparison(port, "again"))
        assert found.bug_in == "MLP.act"


def test_an_input_changed_in_place_is_a_difference_in_replay_and_in_bisection(tmp_path):
    reference, port = small_ports.shift_models()
    reference_trace = trace_model(reference, tmp_path)

    verdicts = {call.module_path: call for call in replay_trace(reference_trace, port).modules}
    shift = verdicts["ShiftModel.blocks.1.shift"]
    assert shift.verdict is ReplayVerdict.WRONG and shift.max_abs_diff == 0  # its outputs are right
    assert "modifies its inputs in place (args.0 (max change 100))" in shift.reason
    assert verdicts["ShiftModel.blocks.1"].verdict is ReplayVerdict.WRONG
    assert verdicts["ShiftModel.blocks.1"].first_wrong == "blocks.1.out inputs.args.0"
    assert verdicts["ShiftModel.blocks.0.shift"].verdict is ReplayVerdict.CORRECT

    found = replay_trace(reference_trace, port, bisect=True)
    assert found.bug_in == found.smallest_wrong.module_path == "ShiftModel.blocks.1.shift"
    assert "the reference's later calls do not see that change" in found.smallest_wrong.reason


def test_a_module_paired_with_one_that_computes_only_part_of_it_is_not_replayed(tmp_path):
    reference, port = small_ports.norm_outside_models()
    reference_trace = trace_model(reference, tmp_path / "reference")
    comparison = compare_traces(reference_trace, trace_model(port, tmp_path / "port"))
    verdicts = {
        call.module_path: call for call in replay_trace(reference_trace, port, comparison=comparison).modules
    }
    inner = verdicts["NormOutside.inner"]
    assert (
        inner.verdict is ReplayVerdict.NOT_REPLAYED
    )  # not "wrong": the port's inner gets the norm applied first
    assert "the counterpart of inner.norm (norm) runs outside it" in inner.reason
    assert {
        verdicts[path].verdict for path in ("NormOutside", "NormOutside.inner.norm", "NormOutside.inner.fc")
    } == {ReplayVerdict.CORRECT}
