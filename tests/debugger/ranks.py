"""Starting the processes of a torch.distributed test on this machine, and telling a hung rank from a slow one.

A hung rank is told from a slow one by the CPU time the ranks use, not by wall time: on a busy
machine (load average 20 on 2 cores) they may wait a minute for a core, but while they make
progress they use CPU. A run fails when no rank used CPU for ``STALL_SECONDS`` (all blocked: a
deadlock), when they used more than ``CPU_BUDGET_SECONDS`` between them (a rank spinning), or after
``WALL_LIMIT_SECONDS`` in any case. A rank waiting for a peer that cannot come gives up by itself
after the process group's timeout (the workers set it).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

STALL_SECONDS = 60
PROGRESS_CPU_SECONDS = 0.1  # a rank polling for a peer that never comes uses less than this a minute
CPU_BUDGET_SECONDS = 240
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


def run_ranks(worker: Path, world_size: int, arguments: list[str], log_dir: Path) -> None:
    """Run ``python worker RANK WORLD_SIZE INIT_FILE *arguments`` for every rank; fail with their logs
    unless each exits 0."""
    init_file = log_dir / "store"
    logs = [log_dir / f"rank{rank}.log" for rank in range(world_size)]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    ranks = []
    try:
        for rank, log in enumerate(logs):
            with log.open("w") as output:  # a file, not a pipe: a long traceback cannot block a rank
                command = [
                    sys.executable,
                    str(worker),
                    str(rank),
                    str(world_size),
                    str(init_file),
                    *arguments,
                ]
                ranks.append(
                    subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environment)
                )
        hung = _wait_for(ranks)
    finally:
        for process in ranks:
            process.kill()
            process.wait()
    output = "\n".join(log.read_text() for log in logs)
    assert hung is None, f"{hung}\n{output}"
    assert [process.returncode for process in ranks] == [0] * world_size, output
