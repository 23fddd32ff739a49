"""One rank of the two-process debugger test (run by test_distributed.py, not collected by pytest).

Traces a DTensor-sharded layer with ``ranks="0"`` (into ``default/rank<N>``), ``"all"`` and ``"gathered"``.

Usage: python distributed_worker.py RANK WORLD_SIZE INIT_FILE OUTPUT_ROOT
"""

import sys
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor

from model_debugging import model_addition_debugger_context


class ShardedScale(nn.Module):
    def __init__(self, mesh):
        super().__init__()
        self.weight = nn.Parameter(distribute_tensor(torch.arange(8.0).reshape(4, 2), mesh, [Shard(0)]))

    def forward(self, hidden):
        return hidden * self.weight


class ShardedModel(nn.Module):
    def __init__(self, mesh):
        super().__init__()
        self.scale = ShardedScale(mesh)

    def forward(self, hidden):
        return self.scale(hidden)


def main(rank: int, world_size: int, init_file: str, output_root: str) -> None:
    # a rank whose peer died or hung stops waiting (and fails) after this, instead of gloo's 30 minutes
    timeout = timedelta(seconds=120)
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size, timeout=timeout
    )
    try:
        mesh = init_device_mesh("cpu", (2,))
        model = ShardedModel(mesh)
        hidden = distribute_tensor(torch.ones(4, 2), mesh, [Shard(0)])
        output = Path(output_root)
        with model_addition_debugger_context(model, debug_path=output / "default" / f"rank{rank}"):
            result = model(hidden)
        assert result.to_local().shape == (2, 2)
        for ranks in ("all", "gathered"):
            with model_addition_debugger_context(model, debug_path=output / ranks, ranks=ranks):
                model(hidden)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
