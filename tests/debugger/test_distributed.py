"""Two gloo processes tracing a DTensor-sharded layer: only rank 0 writes, from its local shard.

A hung rank is told from a slow one by the CPU time the ranks use, not by wall time: on a busy
machine (load average 20 on 2 cores) they may wait a minute for a core, but while they make
progress they use CPU. The test fails when neither rank used CPU for ``STALL_SECONDS`` (both
blocked: a deadlock), when they used more than ``CPU_BUDGET_SECONDS`` between them (about 10 s is
normal: a rank spinning), or after ``WALL_LIMIT_SECONDS`` in any case. A rank waiting for a peer
that cannot come gives up by itself after the process group's timeout (see distributed_worker.py).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")

WORKER = Path(__file__).with_name("distributed_worker.py")
STALL_SECONDS = 60
PROGRESS_CPU_SECONDS = 0.1  # a rank polling for a peer that never comes uses less than this a minute
CPU_BUDGET_SECONDS = 120
WALL_LIMIT_SECONDS = 900


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a running process (Linux); None where /proc cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_for(ranks: list[subprocess.Popen]) -> str | None:
    """Wait until every rank has ended or one failed; return why they look hung, or None."""
    started = progress_mark = time.monotonic()
    used_at_mark = used = 0.0
    cpu: dict[int, float] = {}
    while True:
        codes = [rank.poll() for rank in ranks]
        if None not in codes or any(code not in (None, 0) for code in codes):
            return None
        for rank in ranks:
            seconds = _cpu_seconds(rank.pid)
            if seconds is not None:
                cpu[rank.pid] = max(seconds, cpu.get(rank.pid, 0.0))
        used, now = sum(cpu.values()), time.monotonic()
        if used - used_at_mark >= PROGRESS_CPU_SECONDS or not cpu:
            progress_mark, used_at_mark = now, used
        if now - progress_mark > STALL_SECONDS:
            return f"no rank used CPU for {STALL_SECONDS} s (deadlocked)"
        if used > CPU_BUDGET_SECONDS:
            return f"the ranks used {used:.0f} s of CPU (spinning)"
        if now - started > WALL_LIMIT_SECONDS:
            return f"not done after {WALL_LIMIT_SECONDS} s"
        time.sleep(0.2)


def test_only_rank_zero_writes_local_shards(tmp_path):
    init_file = tmp_path / "store"
    logs = [tmp_path / f"rank{rank}.log" for rank in range(2)]
    ranks = []
    try:
        for rank, log in enumerate(logs):
            with log.open("w") as output:  # a file, not a pipe: a long traceback cannot block a rank
                ranks.append(
                    subprocess.Popen(
                        [sys.executable, str(WORKER), str(rank), str(init_file), str(tmp_path)],
                        stdout=output,
                        stderr=subprocess.STDOUT,
                    )
                )
        hung = _wait_for(ranks)
    finally:
        for process in ranks:
            process.kill()
            process.wait()
    output = "\n".join(log.read_text() for log in logs)
    assert hung is None, f"{hung}\n{output}"
    assert [process.returncode for process in ranks] == [0, 0], output

    assert not (tmp_path / "rank1").exists()
    trace = json.loads((tmp_path / "rank0" / "ShardedModel_debug_tree_FULL_TENSORS.json").read_text())
    (scale,) = trace["children"]
    assert scale["module_path"] == "ShardedModel.scale"
    assert scale["inputs"]["args"][0]["shape"] == "torch.Size([2, 2])"  # the local shard, not [4, 2]
    assert scale["outputs"]["value"] == [
        "tensor([[0.0000e+00, 1.0000e+00],",
        "        [2.0000e+00, 3.0000e+00]])",
    ]
