"""``model-debugging replay``: verdicts, exit codes and one-line errors, on a toy model."""

import pytest
import torch

from model_debugging import ReplayVerdict, compare_traces, model_addition_debugger_context, replay_trace
from model_debugging.cli import main
from tests.replay import toys

TOY = "tests.replay.toys:build_model"


def trace_toy(model, directory):
    with model_addition_debugger_context(
        model,
        debug_path=directory,
        do_prune_layers=False,
        use_repr=False,
        record_functions=["scale_and_shift"],
    ):
        model(toys.toy_inputs())
    return directory


@pytest.fixture
def reference_trace(tmp_path):
    return trace_toy(toys.build_model(), tmp_path / "reference")


def test_a_faithful_candidate_replays_correct_and_exits_0(reference_trace, capsys):
    assert main(["replay", str(reference_trace), "--model", TOY]) == 0
    out = " ".join(capsys.readouterr().out.split())  # wrapped to the terminal width
    assert "0 wrong on identical inputs, 0 not replayed" in out


def test_a_wrong_helper_is_found_by_bisection_and_exits_1(reference_trace, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(toys, "EXTRA_FACTOR", 3.0)
    assert (
        main(["replay", str(reference_trace), "--model", TOY, "--bisect", "--json", str(tmp_path / "r.json")])
        == 1
    )
    out = " ".join(capsys.readouterr().out.split())  # wrapped to the terminal width
    assert "smallest module wrong on identical inputs: Toy.blocks.0.scale_and_shift" in out
    assert '"smallest_wrong": "Toy.blocks.0.scale_and_shift"' in (tmp_path / "r.json").read_text()


def test_modules_selects_calls_and_the_verdict_of_a_parent_comes_from_its_leaves(
    reference_trace, monkeypatch
):
    monkeypatch.setattr(toys, "EXTRA_FACTOR", 3.0)
    result = replay_trace(reference_trace, toys.build_model(), ["blocks.1", "embed"])
    assert [(m.module_path, m.verdict) for m in result.modules] == [
        ("Toy.embed", ReplayVerdict.CORRECT),
        ("Toy.blocks.1", ReplayVerdict.WRONG),
    ]
    # what reaches fc_out already differs: the wrong helper runs before it
    assert result.modules[1].first_wrong == "blocks.1.fc_out inputs.args.0"


def test_a_candidate_with_other_module_names_is_matched_through_rename_rules(reference_trace):
    model = toys.build_model()
    model.layers = model.blocks
    del model.blocks
    without = replay_trace(reference_trace, model, ["blocks.0.fc_in"])
    assert without.modules[0].verdict is ReplayVerdict.NOT_REPLAYED
    assert "no submodule of the candidate matches 'blocks.0.fc_in'" in without.modules[0].reason
    renamed = replay_trace(reference_trace, model, ["blocks.0.fc_in"], rename=[r"^layers\.=blocks."])
    assert renamed.modules[0].verdict is ReplayVerdict.CORRECT


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--model", "tests.replay.toys:nothing"], "tests.replay.toys defines no 'nothing'"),
        (["--model", "no_such_package.module:build"], "cannot import 'no_such_package.module'"),
        (["--model", "missing_script.py"], "missing_script.py: no such file"),
        (["--model", "tests.replay.toys:EXTRA_FACTOR"], "is a float, not a model or a function"),
        (["--model", TOY, "--module", "blocks.0.fc_inn"], "did you mean blocks.0.fc_in"),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(reference_trace, capsys, arguments, message):
    assert main(["replay", str(reference_trace), *arguments]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_trace_recorded_as_reprs_cannot_be_replayed(tmp_path, capsys):
    model = toys.build_model()
    with model_addition_debugger_context(model, debug_path=tmp_path, use_repr=True):
        model(toys.toy_inputs())
    assert main(["replay", str(tmp_path), "--model", TOY]) == 2
    assert "trace the reference with use_repr=False" in capsys.readouterr().err


def test_replaying_every_call_blames_the_code_between_correct_leaves(reference_trace, monkeypatch):
    monkeypatch.setattr(toys, "EXTRA_FACTOR", 3.0)
    verdicts = {m.module_path: m for m in replay_trace(reference_trace, toys.build_model()).modules}
    assert verdicts["Toy.blocks.0.fc_out"].verdict is ReplayVerdict.CORRECT
    assert verdicts["Toy.blocks.0.scale_and_shift"].verdict is ReplayVerdict.WRONG
    block = verdicts["Toy.blocks.0"]
    assert block.verdict is ReplayVerdict.WRONG
    # fc_out is known correct, so inside the block only what reaches it is checked
    assert block.first_wrong == "blocks.0.fc_out inputs.args.0"


def test_a_compare_result_aligns_a_differently_named_candidate(reference_trace, tmp_path):
    renamed = toys.build_renamed_model()
    trace_toy(renamed, tmp_path / "port")
    unaligned = replay_trace(reference_trace, renamed, ["embed"])
    assert unaligned.modules[0].verdict is ReplayVerdict.NOT_REPLAYED

    comparison = compare_traces(reference_trace, tmp_path / "port")
    result = replay_trace(reference_trace, renamed, comparison=comparison)
    assert {m.verdict for m in result.modules} == {ReplayVerdict.CORRECT}
    assert {m.candidate_path for m in result.modules} >= {"proj", "layers.1.fc_out", "out"}


def test_bisection_starts_at_the_module_given(reference_trace, monkeypatch, capsys):
    monkeypatch.setattr(toys, "EXTRA_FACTOR", 3.0)
    assert main(["replay", str(reference_trace), "--model", TOY, "--bisect", "--module", "blocks.1"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "smallest module wrong on identical inputs: Toy.blocks.1.scale_and_shift" in out
    assert "Toy.embed" not in out  # nothing outside blocks.1 was replayed


class Wrapped(torch.nn.Module):
    """The toy under a ``model`` wrapper, as transformers models hold their layers."""

    def __init__(self):
        super().__init__()
        self.model = toys.build_model()

    def forward(self, x):
        return self.model(x)


def test_a_port_without_the_reference_wrapper_is_matched_through_it(tmp_path, monkeypatch):
    reference_trace = trace_toy(Wrapped().eval(), tmp_path)
    monkeypatch.setattr(toys, "EXTRA_FACTOR", 3.0)
    found = replay_trace(reference_trace, toys.build_model(), bisect=True)  # the port: the toy, unwrapped
    assert found.bug_in == "Wrapped.model.blocks.0.scale_and_shift"
    model_call = next(call for call in found.modules if call.module_path == "Wrapped.model")
    assert model_call.verdict is ReplayVerdict.NOT_REPLAYED  # looked through
