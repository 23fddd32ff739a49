"""A tiny Llama sharded by transformers' ``tp_plan="auto"`` over 2 and 4 gloo processes, traced with
``ranks="gathered"`` and ``"all"``, and compared with the unsharded model's trace.

Each world size starts its processes once: 15-25 s of wall time on a loaded 2-core machine, most of
it importing transformers in each process (5 s each), so the tests are marked ``slow``.
"""

import json
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from model_debugging.compare import compare_traces
from tests.debugger.ranks import run_ranks
from tests.debugger.tensor_parallel_worker import SCALED_SHARD, UNREDUCED

transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")  # transformers shards a model only with accelerate installed
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available"),
]

WORKER = Path(__file__).with_name("tensor_parallel_worker.py")


@pytest.fixture(scope="module", params=[2, 4], ids=["2 ranks", "4 ranks"])
def run(request, tmp_path_factory):
    """The traces of one tensor-parallel run (see tensor_parallel_worker.py) and its world size."""
    output = tmp_path_factory.mktemp(f"tp{request.param}")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        vocab_size=128,
        max_position_embeddings=64,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(output / "model")
    run_ranks(WORKER, request.param, [str(output / "model"), str(output)], output)
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
