"""debug_port and ``model-debugging debug-port``: the whole loop in one call, as a porter runs it."""

import json
import shutil
import textwrap

import pytest
import torch

from model_debugging import debug_port
from model_debugging.porting.api import DebugPortError
from model_debugging.porting.command import main

REFERENCE = """
import torch
from torch import nn


class Reference(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed, self.norm, self.head = nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 3)

    def forward(self, features, scale=1.0):
        return self.head(self.norm(self.embed(features)) * scale)
"""
# the port lives in a file of its own beside the script, as a porter's package would
PORT = """
import torch
from torch import nn


class Port(nn.Module):
    def __init__(self, bug=False):
        super().__init__()
        self.bug = bug
        self.proj, self.ln, self.out = nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 3)

    def forward(self, features, scale=1.0):
        hidden = self.ln(self.proj(features)) * scale
        if self.bug:
            hidden = hidden.flip(-1)
        return self.out(hidden)


def converted(reference, bug=False):
    port = Port(bug)
    port.load_state_dict(dict(zip(port.state_dict(), reference.state_dict().values())))
    return port.eval()
"""
SCRIPT = """
import torch

from my_port import converted
from my_reference import Reference


def build_reference():
    return Reference().eval()


def build_port(reference):
    return converted(reference, bug=BUG)


def build_inputs():
    return {"features": torch.randn(2, 5, 4, generator=torch.Generator().manual_seed(1)), "scale": 2.0}
"""


@pytest.fixture
def script(tmp_path):
    """``script(bug)``: a porter's script in a folder of its own, beside the files it imports."""

    def write(bug: bool) -> str:
        folder = tmp_path / f"project_{bug}"
        folder.mkdir()
        (folder / "my_reference.py").write_text(REFERENCE)
        (folder / "my_port.py").write_text(PORT)
        (folder / "check_port.py").write_text(textwrap.dedent(SCRIPT).replace("BUG", str(bug)))
        return str(folder / "check_port.py")

    return write


def test_a_correct_port_is_equivalent_in_one_command(script, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    output = tmp_path / "out"
    assert main([script(False), "--output_dir", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "result: EQUIVALENT within tolerance" in printed
    assert "returned outputs: equal within tolerance (max abs diff 0)" in printed
    assert printed.rstrip().endswith("verdict: EQUIVALENT")
    assert max(map(len, printed.splitlines())) <= 100
    assert {path.name for path in output.iterdir()} == {
        ".debug_port", "reference", "port", "comparison.json", "comparison.html", "renames.yaml"
    }  # fmt: skip
    assert json.loads((output / "comparison.json").read_text())["equivalent"] is True
    assert "Port.proj" in (output / "comparison.html").read_text()


def test_a_bug_is_named_and_a_second_run_replaces_the_first(script, tmp_path, capsys):
    output = tmp_path / "out"
    assert main([script(False), "--output_dir", str(output)]) == 0
    assert main([script(True), "--output_dir", str(output)]) == 1
    printed = capsys.readouterr().out
    assert "divergence origin: Reference (inside it, the inputs of Reference.head differ" in printed
    assert "returned outputs: DIFFER" in printed
    assert json.loads((output / "comparison.json").read_text())["equivalent"] is False


def test_a_directory_with_other_files_is_refused_untouched(script, tmp_path, capsys):
    output = tmp_path / "mine"
    output.mkdir()
    (output / "notes.txt").write_text("keep me")
    assert main([script(False), "--output_dir", str(output)]) == 2
    error = capsys.readouterr().err
    assert error.strip() == (
        f"model-debugging debug-port: error: {output} holds files debug_port did not write (notes.txt): "
        "choose another output directory"
    )
    assert [path.name for path in output.iterdir()] == ["notes.txt"]


def test_traces_a_porter_recorded_by_hand_in_reference_and_port_are_never_replaced(script, tmp_path, capsys):
    """The replay guide records ``reference/`` and ``port/`` by hand: named like debug_port's traces,
    but no run of debug_port wrote them (no .debug_port marker), so they are refused, untouched."""
    output = tmp_path / "traces"
    for name in ("reference", "port"):
        (output / name).mkdir(parents=True)
        (output / name / "NOTES.md").write_text("mine")
    before = sorted(path.relative_to(output) for path in output.rglob("*"))
    mtimes = [path.stat().st_mtime_ns for path in (output, output / "port", output / "reference")]
    assert main([script(False), "--output_dir", str(output)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"model-debugging debug-port: error: {output} holds files debug_port did not write (port, reference; "
        "it has no .debug_port file: no run of debug_port wrote them): choose another output directory"
    )
    assert sorted(path.relative_to(output) for path in output.rglob("*")) == before
    assert [path.stat().st_mtime_ns for path in (output, output / "port", output / "reference")] == mtimes


def test_a_link_in_place_of_an_earlier_runs_trace_is_removed_not_followed(script, tmp_path):
    output, elsewhere, path = tmp_path / "out", tmp_path / "elsewhere", script(False)
    assert main([path, "--output_dir", str(output)]) == 0
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    shutil.rmtree(output / "reference")
    (output / "reference").symlink_to(elsewhere)
    assert main([path, "--output_dir", str(output)]) == 0
    assert [path.name for path in elsewhere.iterdir()] == ["keep.txt"]
    assert not (output / "reference").is_symlink() and (output / "reference").is_dir()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["nowhere.py"], "nowhere.py: no such file"),
        (["--port", "build_it"], "check_port.py defines no 'build_it'"),
        (
            ["--record_function", "no_such_function"],
            "record_functions: no Python function 'no_such_function'",
        ),
    ],
)
def test_unusable_input_exits_2_with_one_line(script, tmp_path, capsys, arguments, message):
    path = script(False)
    argv = arguments if arguments[0].endswith(".py") else [path, *arguments]
    assert main([*argv, "--output_dir", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error


class Raising(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.second(self.first(x).view(2, 3))


def test_a_port_that_raises_is_a_finding_named_at_the_module(tmp_path, capsys):
    torch.manual_seed(0)
    reference, port = Raising().eval(), Raising().eval()
    reference.forward = lambda x: reference.second(reference.first(x))
    port.load_state_dict(reference.state_dict())
    result = debug_port(reference, port, torch.randn(2, 4), output_dir=tmp_path / "out")
    assert not result.equivalent
    assert result.outputs_note.startswith("the port raised RuntimeError: shape '[2, 3]' is invalid")
    assert result.comparison.divergence_origin is not None
    assert "verdict: NOT EQUIVALENT" in capsys.readouterr().out
    with pytest.raises(DebugPortError, match="holds files debug_port did not write"):
        (tmp_path / "out" / "x.txt").write_text("")
        debug_port(reference, port, torch.randn(2, 4), output_dir=tmp_path / "out", verbose=False)


@pytest.mark.integration
def test_a_hand_written_gemma_port_with_the_api(tmp_path, capsys):
    pytest.importorskip("transformers")
    from tests.ports import Style, gemma

    reference = gemma.reference()
    check = debug_port(
        reference, gemma.port(reference, Style.PLAIN), gemma.inputs(), output_dir=tmp_path / "ok"
    )
    assert check.equivalent and check.outputs_max_abs_diff == 0.0
    buggy = gemma.port(reference, Style.KEYWORDS, gemma.Bug.ROPE_SIGN)
    check = debug_port(reference, buggy, gemma.inputs(), output_dir=tmp_path / "bug", verbose=False)
    assert check.comparison.divergence_origin.module_path == "GemmaForCausalLM.model.layers.0.self_attn"
    assert check.page.is_file()


class TiedReference(torch.nn.Module):
    """A language model whose head shares the embedding matrix, as transformers ties it."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed, self.norm = torch.nn.Embedding(11, 8), torch.nn.LayerNorm(8)
        self.lm_head = torch.nn.Linear(8, 11, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, input_ids):
        return self.lm_head(self.norm(self.embed(input_ids)))


class TiedPort(torch.nn.Module):
    """The port applies the tied head in its forward: no call of its own, so the traces cannot
    compare the final outputs (compare says NOT CONFIRMED); the returned outputs can."""

    def __init__(self, reference: torch.nn.Module, scale: float = 1.0):
        super().__init__()
        self.tok, self.ln, self.scale = torch.nn.Embedding(11, 8), torch.nn.LayerNorm(8), scale
        self.load_state_dict(
            {
                "tok.weight": reference.embed.weight,
                **{f"ln.{k}": v for k, v in reference.norm.state_dict().items()},
            }
        )

    def forward(self, input_ids):
        return self.ln(self.tok(input_ids)) @ self.tok.weight.T * self.scale


@pytest.mark.parametrize("scale", [1.0, 8**-0.5], ids=["correct", "logits_scaled"])
def test_a_port_applying_its_tied_head_in_its_forward_is_judged_on_what_it_returns(
    tmp_path, capsys, monkeypatch, scale
):
    monkeypatch.setenv("COLUMNS", "300")
    reference = TiedReference().eval()
    input_ids = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(1))
    check = debug_port(
        reference, TiedPort(reference, scale).eval(), {"input_ids": input_ids}, output_dir=tmp_path
    )
    printed = capsys.readouterr().out
    assert "result: NOT CONFIRMED" in printed and "lm_head has no counterpart" in printed
    assert "they are the final outputs the traces could not compare" in printed
    correct = scale == 1.0
    assert check.equivalent is correct and check.outputs_match is correct
    assert printed.rstrip().endswith("verdict: EQUIVALENT" if correct else "verdict: NOT EQUIVALENT")
    assert json.loads((tmp_path / "comparison.json").read_text())["equivalent"] is correct


@pytest.mark.integration
@pytest.mark.parametrize("bug", ["NONE", "NO_CAUSAL_MASK", "ENCODER_NORM_SKIPPED"])
def test_a_hand_written_whisper_port_with_its_tied_head_in_its_forward(tmp_path, capsys, monkeypatch, bug):
    pytest.importorskip("transformers")
    from tests.ports import whisper

    monkeypatch.setenv("COLUMNS", "300")
    reference = whisper.reference()
    port = whisper.port(reference, bug=whisper.Bug[bug])
    check = debug_port(reference, port, whisper.inputs(), output_dir=tmp_path)
    printed = capsys.readouterr().out
    if bug == "NONE":
        assert (
            "the reference's last call WhisperForConditionalGeneration.proj_out has no counterpart" in printed
        )
        assert check.equivalent and printed.rstrip().endswith("verdict: EQUIVALENT")
        return
    assert not check.equivalent and printed.rstrip().endswith("verdict: NOT EQUIVALENT")
    origin = check.comparison.divergence_origin.module_path
    if bug == "NO_CAUSAL_MASK":
        assert origin == "WhisperForConditionalGeneration.model.decoder.layers.0.self_attn"
        return
    # the port has no call of the encoder's final norm: the origin is the model, and the first thing
    # its note names is the reference's norm, which made what the decoder's first layer got
    root = "WhisperForConditionalGeneration"
    assert origin == root
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("divergence origin:")) + 1
    note = " ".join(line.strip() for line in lines[start : start + 3])  # as printed, in lines of 300 columns
    assert note.startswith(
        f"{root}.model.encoder.layer_norm (no counterpart in the candidate) made what "
        f"{root}.model.decoder.layers.0 receives as inputs.args.2 / args.1 (its output), and the candidate's "
        f"{root}.model.decoder.layers.0 received what {root}.model.encoder.layer_norm was given: the port skips it"
    ), note
    # the port projects the memory (kv) before the query (q): where the values no longer tell its
    # cross-attention's q and out apart (every layer after the first), they pair as in layer 0
    paired = {module.module_path: module.candidate_path for module in check.comparison.modules}
    for layer in (0, 1):
        attention = f"{root}.model.decoder.layers.{layer}.encoder_attn"
        assert paired[f"{attention}.q_proj"] == f"Whisper.dec.{layer}.cross.q"
        assert paired[f"{attention}.out_proj"] == f"Whisper.dec.{layer}.cross.out"
    renames = (tmp_path / "renames.yaml").read_text()
    assert "^dec\\.(\\d+)\\.cross\\.q$" in renames, renames  # one rule for every layer
