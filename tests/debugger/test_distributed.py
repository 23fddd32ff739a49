"""Two gloo processes tracing a DTensor-sharded layer with each ``ranks`` option of the debugger."""

import json
from pathlib import Path

import pytest
import torch.distributed as dist

from tests.debugger.ranks import run_ranks

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")

WORKER = Path(__file__).with_name("distributed_worker.py")


def _trace(directory: Path) -> tuple[dict, dict]:
    """The ``scale`` node of the trace in ``directory`` and the extra file's node of it."""
    trace = json.loads((directory / "ShardedModel_debug_tree_FULL_TENSORS.json").read_text())
    extra = json.loads((directory / "ShardedModel_debug_tree_EXTRA.json").read_text())
    (scale,) = trace["children"]
    (extra_scale,) = extra["tree"]["children"]
    return scale, {"run": extra.get("distributed"), **extra_scale}


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    output = tmp_path_factory.mktemp("ranks")
    run_ranks(WORKER, 2, [str(output)], output)
    return output


def test_by_default_only_rank_zero_writes_its_local_shards(traced):
    assert not (traced / "default" / "rank1").exists()
    scale, extra = _trace(traced / "default" / "rank0")
    assert scale["module_path"] == "ShardedModel.scale"
    assert scale["inputs"]["args"][0]["shape"] == "torch.Size([2, 2])"  # the local shard, not [4, 2]
    assert scale["outputs"]["value"] == [
        "tensor([[0.0000e+00, 1.0000e+00],",
        "        [2.0000e+00, 3.0000e+00]])",
    ]
    assert extra["run"] is None and all("placement" not in item for item in extra["tensors"])


def test_every_rank_writes_its_own_shards_with_their_placement(traced):
    scale, extra = _trace(traced / "all" / "rank1")
    assert scale["outputs"]["value"] == [
        "tensor([[4.0000e+00, 5.0000e+00],",
        "        [6.0000e+00, 7.0000e+00]])",
    ]
    assert extra["run"] == {"ranks": "all", "rank": 1, "world_size": 2}
    output = extra["tensors"][-1]["placement"]
    assert output == {"placements": ["Shard(dim=0)"], "source": "dtensor", "global_shape": [4, 2]}
    assert (traced / "all" / "rank0" / "ShardedModel_debug_tree_SUMMARY.json").is_file()


def test_the_gathered_view_records_the_full_tensors(traced):
    assert not (traced / "gathered" / "rank0").exists()
    scale, extra = _trace(traced / "gathered")
    assert scale["inputs"]["args"][0]["shape"] == "torch.Size([4, 2])"
    assert scale["outputs"]["value"] == [
        "tensor([[0.0000e+00, 1.0000e+00],",
        "        [2.0000e+00, 3.0000e+00],",
        "        [4.0000e+00, 5.0000e+00],",
        "        [6.0000e+00, 7.0000e+00]])",
    ]
    assert extra["run"] == {"ranks": "gathered", "rank": 0, "world_size": 2}
    assert extra["tensors"][-1]["placement"] == {"placements": ["Shard(dim=0)"], "source": "dtensor"}
