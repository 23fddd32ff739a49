"""A tiny Llama sharded by transformers' ``tp_plan="auto"`` over 2 and 4 gloo processes, traced with
``ranks="gathered"`` and ``"all"``, and compared with the unsharded model's trace.

Each world size starts its processes once, and most of the time goes to importing transformers in
each process (about 5 s each on a loaded 2-core machine): 2 ranks take 15-45 s, so the tests are
marked ``slow``; 4 ranks take twice that and run only with ``MODEL_DEBUGGING_SLOW=1``.
"""

import importlib.util
import json
import os
from pathlib import Path

import pytest
import torch.distributed as dist

from model_debugging import compare_traces
from tests.debugger.ranks import run_ranks

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available"),
    # transformers shards a model only with accelerate installed (both are in the test extra)
    pytest.mark.skipif(
        importlib.util.find_spec("transformers") is None or importlib.util.find_spec("accelerate") is None,
        reason="needs transformers and accelerate",
    ),
]

WORKER = Path(__file__).with_name("tensor_parallel_worker.py")
# the planted bugs: the last rank's shard of this column-parallel projection is scaled ...
SCALED_SHARD = "model.layers.0.mlp.gate_proj"
# ... and this row-parallel projection's partial sums are never reduced
UNREDUCED = "model.layers.1.self_attn.o_proj"


FOUR_RANKS = pytest.param(
    4,
    id="4 ranks",
    marks=pytest.mark.skipif(
        os.environ.get("MODEL_DEBUGGING_SLOW") != "1", reason="set MODEL_DEBUGGING_SLOW=1 (about 70 s)"
    ),
)


@pytest.fixture(scope="module", params=[pytest.param(2, id="2 ranks"), FOUR_RANKS])
def run(request, tmp_path_factory):
    """The traces of one tensor-parallel run (see tensor_parallel_worker.py) and its world size."""
    output = tmp_path_factory.mktemp(f"tp{request.param}")
    run_ranks(WORKER, request.param, [str(output), SCALED_SHARD, UNREDUCED], output)
    return output, request.param


def test_the_gathered_trace_of_a_correct_run_is_equivalent_to_one_process(run):
    output, world_size = run
    result = compare_traces(output / "reference", output / "gathered")
    assert result.equivalent, "\n".join(result.summary_lines())
    assert f"recorded over {world_size} ranks" in result.tolerance_basis
    trace = json.loads((output / "gathered" / "LlamaForCausalLM_debug_tree_SUMMARY.json").read_text())
    q_proj = trace["children"][0]["children"][2]["children"][1]["children"][0]
    assert q_proj["module_path"].endswith("layers.0.self_attn.q_proj")
    assert q_proj["outputs"]["shape"] == "torch.Size([1, 10, 64])"  # every rank's heads, joined


def test_a_scaled_shard_is_named_at_its_module_and_rank(run):
    output, world_size = run
    result = compare_traces(output / "reference", output / "scaled_shard")
    assert result.divergence_origin.module_path == f"LlamaForCausalLM.{SCALED_SHARD}"
    agreeing = ", ".join(str(rank) for rank in range(world_size - 1))
    assert result.rank_note == (
        f"outputs: the shard of rank {world_size - 1} differs (dimension 2 is split over the ranks), "
        f"the shard of rank{'s' if world_size > 2 else ''} {agreeing} agrees"
    )


def test_a_missing_reduction_is_named_at_its_module(run):
    output, _ = run
    result = compare_traces(output / "reference", output / "missing_reduction")
    assert result.divergence_origin.module_path == f"LlamaForCausalLM.{UNREDUCED}"
    assert "partial sums that were never reduced (a missing all-reduce)" in result.rank_note


@pytest.mark.parametrize(("traces", "equivalent"), [("per_rank", True), ("per_rank_scaled_shard", False)])
def test_per_rank_traces_are_compared_as_one_run(run, traces, equivalent):
    output, world_size = run
    result = compare_traces(output / "reference", output / traces)
    assert result.equivalent is equivalent, "\n".join(result.summary_lines())
    if not equivalent:
        assert result.divergence_origin.module_path == f"LlamaForCausalLM.{SCALED_SHARD}"
        assert result.rank_note.startswith(f"outputs: the shard of rank {world_size - 1} differs")


def test_every_rank_writes_its_own_trace(run):
    output, world_size = run
    for rank in range(world_size):
        extra = json.loads(
            (output / "per_rank" / f"rank{rank}" / "LlamaForCausalLM_debug_tree_EXTRA.json").read_text()
        )
        assert extra["distributed"] == {"ranks": "all", "rank": rank, "world_size": world_size}
    trace = json.loads(
        (output / "per_rank" / "rank1" / "LlamaForCausalLM_debug_tree_SUMMARY.json").read_text()
    )
    q_proj = trace["children"][0]["children"][2]["children"][1]["children"][0]
    assert q_proj["outputs"]["shape"] == f"torch.Size([1, 10, {64 // world_size}])"  # this rank's heads
