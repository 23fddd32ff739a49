"""Two gloo processes tracing a DTensor-sharded layer: only rank 0 writes, from its local shard."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")

WORKER = Path(__file__).with_name("distributed_worker.py")


def test_only_rank_zero_writes_local_shards(tmp_path):
    init_file = tmp_path / "store"
    ranks = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(rank), str(init_file), str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(2)
    ]
    deadline = time.monotonic() + 60  # for the whole test: a hung rank must not hang the suite
    try:
        logs = [process.communicate(timeout=max(1.0, deadline - time.monotonic()))[0] for process in ranks]
    finally:
        for process in ranks:
            process.kill()
    assert [process.returncode for process in ranks] == [0, 0], "\n".join(logs)

    assert not (tmp_path / "rank1").exists()
    trace = json.loads((tmp_path / "rank0" / "ShardedModel_debug_tree_FULL_TENSORS.json").read_text())
    (scale,) = trace["children"]
    assert scale["module_path"] == "ShardedModel.scale"
    assert scale["inputs"]["args"][0]["shape"] == "torch.Size([2, 2])"  # the local shard, not [4, 2]
    assert scale["outputs"]["value"] == [
        "tensor([[0.0000e+00, 1.0000e+00],",
        "        [2.0000e+00, 3.0000e+00]])",
    ]
