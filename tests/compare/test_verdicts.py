"""compare never gives a wrong verdict: NaN-aware, dtype-exact, and refusing what it cannot judge."""

import json

import pytest
import torch
from torch import nn

from model_debugging import TraceError, compare_traces, model_addition_debugger_context
from model_debugging.compare.command import main


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, scale):
        return self.proj(x) * scale


def trace(model, directory, *args, use_repr=True, **kwargs):
    with model_addition_debugger_context(model, debug_path=directory, use_repr=use_repr):
        model(*args, **kwargs)
    return directory


@pytest.fixture
def emitted(tmp_path, trace_emitting):
    """``emitted(name, value, use_repr)``: the trace of a model whose leaf returns ``value``."""
    return lambda name, value, use_repr: trace_emitting(tmp_path / name, value, use_repr)


def test_a_trace_whose_std_is_nan_is_equivalent_to_itself(tmp_path):
    torch.manual_seed(0)
    directory = trace(Scaled(), tmp_path, torch.randn(2, 4), scale=torch.tensor(0.5))
    result = compare_traces(directory, directory)
    assert result.equivalent, result.summary_lines()


@pytest.mark.parametrize("use_repr", [True, False])
def test_float64_models_with_different_weights_diverge(tmp_path, use_repr):
    torch.manual_seed(0)
    reference = nn.Sequential(nn.Linear(4, 4)).double()
    candidate = nn.Sequential(nn.Linear(4, 4)).double()
    x = torch.randn(2, 4, dtype=torch.float64)
    result = compare_traces(
        trace(reference, tmp_path / "a", x, use_repr=use_repr),
        trace(candidate, tmp_path / "b", x, use_repr=use_repr),
    )
    assert not result.equivalent
    assert result.divergence_origin.module_path == "Sequential.0"


@pytest.mark.parametrize("use_repr", [True, False])
@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        (torch.tensor([16777217, 3]), torch.tensor([16777216, 3])),  # equal once cast to float32
        (torch.tensor([True, False]), torch.tensor([False, True])),  # same min, max and sum
        (torch.tensor([1, 2, 3], dtype=torch.int32), torch.tensor([1, 3, 2], dtype=torch.int32)),
        # complex numbers compare on both parts: here only an imaginary part differs
        (
            torch.tensor([1 + 1j, 2 + 2j], dtype=torch.complex64),
            torch.tensor([1 + 1j, 2 - 2j], dtype=torch.complex64),
        ),
    ],
)
def test_integers_bools_and_complex_numbers_compare_exactly(emitted, use_repr, reference, candidate):
    result = compare_traces(emitted("a", reference, use_repr), emitted("b", candidate, use_repr))
    assert not result.equivalent
    assert result.divergence_origin.module_path == "Wrapper.emit"


@pytest.mark.parametrize("use_repr", [True, False])
def test_nan_and_inf_count_as_equal_to_themselves_only(emitted, use_repr):
    values = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0], dtype=torch.float64)
    moved = torch.tensor([1.0, float("inf"), -float("inf"), float("nan")], dtype=torch.float64)
    a = emitted("a", values, use_repr)
    assert compare_traces(a, emitted("same", values.clone(), use_repr)).equivalent
    # the statistics (counts of NaN and infinities, stats of the finite rest) cannot see positions
    assert compare_traces(a, emitted("b", moved, use_repr)).equivalent is use_repr


def test_a_trace_without_tensors_is_refused(tmp_path, capsys):
    directory = trace(nn.Identity(), tmp_path / "a", 3.0)
    assert main([str(directory), str(directory)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.endswith("the trace records no tensor: there is nothing to compare")
    assert len(error.splitlines()) == 1


def test_keys_1_and_quoted_1_are_both_kept(tmp_path, trace_emitting):
    value = {1: torch.ones(2), "1": torch.zeros(2), None: torch.ones(1), "null": torch.zeros(1)}
    directory = trace_emitting(tmp_path, value, use_repr=False)
    text = (directory / "Wrapper_debug_tree_FULL_TENSORS.json").read_text()
    outputs = json.loads(text)["children"][0]["outputs"]
    assert list(outputs) == ["1", "1 (str)", "null", "null (str)"]
    assert compare_traces(directory, directory).equivalent


def test_duplicate_keys_in_a_trace_file_are_refused(tmp_path, toy_trace):
    full = toy_trace(tmp_path)
    text = full.read_text().replace(
        '"module_path": "Toy.embed",', '"module_path": "Toy.embed", "module_path": "x",'
    )
    full.write_text(text)
    with pytest.raises(TraceError, match="key 'module_path' appears twice in one object"):
        compare_traces(tmp_path, tmp_path)


def test_a_tensor_file_that_does_not_match_its_entry_exits_2(toy_traces, capsys):
    reference, candidate = toy_traces
    # a file of another shape under the name the trace points to, as a mixed-up directory would have
    (candidate / "Toy.head_outputs.safetensors").write_bytes(
        (candidate / "Toy.embed_outputs.safetensors").read_bytes()
    )
    assert main([str(reference), str(candidate)]) == 2
    error = capsys.readouterr().err.strip()
    assert "Toy.head_outputs.safetensors: holds a torch.float32 tensor of shape [2, 4]" in error
    assert "but the trace records torch.float32 [2]" in error and len(error.splitlines()) == 1


def test_deeply_nested_json_exits_2(tmp_path, capsys):
    nested = "[" * 100_000 + "]" * 100_000
    (tmp_path / "Deep_debug_tree_FULL_TENSORS.json").write_text(
        '{"module_path": "Deep", "inputs": {"args": ' + nested + "}}"
    )
    assert main([str(tmp_path), str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.endswith("nested 100002 levels deep at line 1: deeper than Python can read")


def test_output_paths_are_checked_before_any_work(toy_traces, tmp_path, capsys):
    reference, candidate = toy_traces
    assert main([str(reference), str(candidate), "--markdown", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"model-debugging compare: error: --markdown {tmp_path} is a directory; give a file name"
    )
    missing = tmp_path / "nonexistent" / "x.json"
    assert main([str(reference), str(candidate), "--json", str(missing)]) == 2
    assert "the directory" in capsys.readouterr().err and not missing.parent.exists()


def test_an_incomplete_trace_is_refused(tmp_path, toy_trace, capsys):
    toy_trace(tmp_path)
    (tmp_path / "Toy_debug_tree_INCOMPLETE").write_text("")
    assert main([str(tmp_path), str(tmp_path)]) == 2
    assert "incomplete trace: the run that wrote it stopped before finishing" in capsys.readouterr().err


class Returning(nn.Module):
    """A leaf that returns ``extra`` beside its output, then a head (so the leaf is not the last call)."""

    def __init__(self, extra):
        super().__init__()
        self.extra = extra
        self.attention, self.head = nn.Identity(), nn.Linear(4, 2)
        self.attention.forward = self._attend

    def _attend(self, x):
        return (x * 2, *self.extra(x))

    def forward(self, x):
        return self.head(self.attention(x)[0])


@pytest.mark.parametrize("use_repr", [False, True], ids=["tensors", "stats"])
@pytest.mark.parametrize(
    "options", [[], ["--no_align"], ["--boundaries"]], ids=["default", "no-align", "boundaries"]
)
@pytest.mark.parametrize(
    ("reference", "candidate", "detail"),
    [
        (
            lambda x: (x.softmax(-1),),
            lambda x: (None,),
            "outputs.1 a tensor [3, 4] in the reference, None in the other",
        ),
        (lambda x: (1, "mode-1"), lambda x: (7, "mode-7"), "outputs.1 1 vs 7"),
    ],
    ids=["tensor-on-one-side", "literals"],
)
def test_one_sided_tensors_and_differing_literals_are_differences_in_every_mode(
    tmp_path, use_repr, options, reference, candidate, detail, capsys
):
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    models = Returning(reference).eval(), Returning(candidate).eval()
    models[1].head.load_state_dict(models[0].head.state_dict())
    directories = [
        trace(model, tmp_path / name, x, use_repr=use_repr) for model, name in zip(models, "ab", strict=True)
    ]
    assert main([*map(str, directories), "--json", str(tmp_path / "r.json"), *options]) == 1
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["divergence_origin"]["module_path"] == "Returning.attention"
    assert detail in result["divergence_origin"]["details"]
    assert "divergence origin: Returning.attention (outputs.1" in capsys.readouterr().out
