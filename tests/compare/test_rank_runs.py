"""Per-rank traces (``ranks="all"``) compared as one run with a single-process reference. The ranks'
traces are made here in one process, one model per rank, as a run whose ranks all hold every
tensor whole (replicated) would write them; the sharded runs are in tests/debugger/test_tensor_parallel.py."""

import shutil

import pytest
import torch
from torch import nn

from model_debugging import compare_traces, model_addition_debugger_context
from model_debugging.compare.command import main
from model_debugging.debugger.trace_format.records import TraceError


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.proj = nn.Linear(4, 4)

    def forward(self, hidden):
        return self.proj(self.norm(hidden))


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(Block() for _ in range(3))

    def forward(self, hidden):
        for layer in self.layers:
            hidden = layer(hidden)
        return hidden


HIDDEN = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(1))


def _trace(model: nn.Module, directory, **options) -> None:
    with model_addition_debugger_context(model, directory, do_prune_layers=False, **options):
        model(HIDDEN)


@pytest.fixture
def run(tmp_path):
    """A reference trace and a run of two ranks that hold the same tensors."""
    _trace(Stack(), tmp_path / "reference", use_repr=False)
    _trace(Stack(), tmp_path / "run", use_repr=False, ranks="all")  # one process: writes run/rank0
    shutil.copytree(tmp_path / "run" / "rank0", tmp_path / "run" / "rank1")
    return tmp_path


def test_ranks_that_hold_the_same_tensors_are_equivalent_to_the_reference(run):
    result = compare_traces(run / "reference", run / "run")
    assert result.equivalent
    assert result.candidate == run / "run"


def test_a_rank_that_diverges_on_a_replicated_value_is_named(run):
    diverging = Stack()
    with torch.no_grad():
        diverging.layers[1].proj.weight.mul_(2)
    shutil.rmtree(run / "run" / "rank1")
    _trace(diverging, run / "other", use_repr=False, ranks="all")
    (run / "other" / "rank0").rename(run / "run" / "rank1")
    result = compare_traces(run / "reference", run / "run")
    assert result.divergence_origin.module_path == "Stack.layers.1.proj"
    assert result.rank_note == (
        "outputs: the ranks hold different values where one is expected: rank 1 differs from the "
        "reference, rank 0 agrees"
    )


def test_per_rank_traces_must_hold_full_tensors(run, capsys):
    shutil.rmtree(run / "run" / "rank1")
    _trace(Stack(), run / "run" / "rank1")  # use_repr=True
    assert main([str(run / "reference"), str(run / "run")]) == 2
    assert capsys.readouterr().err.endswith(
        f"{run / 'run' / 'rank1' / 'Stack_debug_tree_FULL_TENSORS.json'}: a per-rank trace must hold full "
        "tensors: trace with use_repr=False\n"
    )


def test_ranks_of_another_run_are_refused(run):
    shutil.rmtree(run / "run" / "rank1")
    _trace(nn.Sequential(Block()), run / "run" / "rank1", use_repr=False)
    with pytest.raises(TraceError, match="records other calls than .*rank0.*: not a rank of the same run"):
        compare_traces(run / "reference", run / "run")


def test_an_output_onto_a_ranks_trace_file_is_refused(run, capsys):
    target = run / "run" / "rank1" / "Stack_debug_tree_SUMMARY.json"
    before = target.read_bytes()
    assert main([str(run / "reference"), str(run / "run"), "--json", str(target)]) == 2
    assert "a file of the candidate trace" in capsys.readouterr().err
    assert target.read_bytes() == before
