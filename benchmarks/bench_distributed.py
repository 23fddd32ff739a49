"""The cost of recording a tensor-parallel forward with ``ranks="gathered"`` against the plain sharded forward.

Run from the repository root (needs transformers and accelerate, the test extra):

    python benchmarks/bench_distributed.py                 # 2 gloo processes on this machine
    python benchmarks/bench_distributed.py --world_size 4 --rounds 5

Saves a randomly initialised LlamaForCausalLM (hidden 256, intermediate 768, 4 layers, 4 heads,
128 tokens by default), loads it in every process with ``from_pretrained(path, tp_plan="auto")``
(gloo, CPU, one intra-op thread per process) and times, in each round, a plain ``torch.no_grad()``
sharded forward, a forward traced with ``ranks="gathered"``, one traced with the default
``ranks="0"`` (rank 0 records its local tensors, as upstream) and the plain forward again, in an
order rotated every round. Every variant starts after a barrier and ends when the slowest rank
is done (a second barrier), so a time is the run's, not one rank's. Both traced variants record
every layer with ``use_repr=False``. Each round gives one ratio per pair; the 10th percentile,
median and 90th percentile of those ratios are printed. plain/plain is the noise floor. The
gathered view takes part in about one collective per recorded call (a fingerprint all-gather, and
a gather of the pieces of a sharded value), so the median time of one all-gather of a small tensor
between the processes is printed too: on a loaded machine it, not the recording, sets the cost.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist

from model_debugging import model_addition_debugger_context

ROUND = ("plain", "gathered", "rank 0", "plain again")
RATIOS = {
    "gathered/plain": ("gathered", "plain"),
    "rank 0/plain": ("rank 0", "plain"),
    "gathered/rank 0": ("gathered", "rank 0"),
    "noise plain/plain": ("plain again", "plain"),
}


def deciles(values: list[float]) -> tuple[float, float, float]:
    """The 10th percentile, median and 90th percentile of ``values``."""
    cuts = statistics.quantiles(values, n=10, method="inclusive")
    return cuts[0], statistics.median(values), cuts[8]


def _timed(run, trace_dir: Path) -> float:
    shutil.rmtree(trace_dir, ignore_errors=True)  # the last trace, removed outside the timed part
    dist.barrier()
    start = time.perf_counter()
    run()
    dist.barrier()
    return time.perf_counter() - start


def rank_main(
    rank: int, world_size: int, init_file: str, model_dir: str, work_dir: str, rounds: int, tokens: int
):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"file://{init_file}",
        rank=rank,
        world_size=world_size,
        timeout=timedelta(minutes=10),
    )
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(model_dir, tp_plan="auto").eval()
    input_ids = torch.arange(tokens).reshape(1, tokens) % model.config.vocab_size
    trace_dir = Path(work_dir) / f"trace{rank}"

    def plain():
        with torch.no_grad():
            model(input_ids)

    def traced(ranks: str):
        def run():
            # rank 0 writes (into its own directory: the other ranks' directories stay empty)
            with model_addition_debugger_context(
                model, trace_dir, do_prune_layers=False, use_repr=False, ranks=ranks
            ):
                model(input_ids)

        return run

    row = torch.zeros(11, dtype=torch.int64)
    rows = [torch.empty_like(row) for _ in range(world_size)]
    latencies = []
    for _ in range(200):
        start = time.perf_counter()
        dist.all_gather(rows, row)
        latencies.append(time.perf_counter() - start)
    variants = {"plain": plain, "gathered": traced("gathered"), "rank 0": traced("0"), "plain again": plain}
    for name in ROUND:  # warm-up
        _timed(variants[name], trace_dir)
    times: list[dict[str, float]] = []
    for round_index in range(rounds):
        order = ROUND[round_index % len(ROUND) :] + ROUND[: round_index % len(ROUND)]
        times.append({name: _timed(variants[name], trace_dir) for name in order})
    if rank == 0:
        print(f"{world_size} ranks, {tokens} tokens, {rounds} rounds")
        print(f"one all-gather of 11 int64 (median of 200): {statistics.median(latencies) * 1e3:.3f} ms")
        print("seconds per forward (median):")
        for name in ROUND:
            print(f"  {name:12s} {statistics.median(t[name] for t in times):.4f}")
        print(f"{'ratio':20s} {'p10':>6s} {'median':>6s} {'p90':>6s}")
        for label, (numerator, denominator) in RATIOS.items():
            low, median, high = deciles([t[numerator] / t[denominator] for t in times])
            print(f"{label:20s} {low:6.2f} {median:6.2f} {high:6.2f}")
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world_size", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--hidden_size", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # set for the processes it starts
    parser.add_argument("--work_dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank is not None:
        work = Path(args.work_dir)
        rank_main(
            args.rank,
            args.world_size,
            str(work / "store"),
            str(work / "model"),
            str(work),
            args.rounds,
            args.tokens,
        )
        return
    from transformers import LlamaConfig, LlamaForCausalLM

    work = Path(tempfile.mkdtemp(prefix="bench_distributed_"))
    try:
        torch.manual_seed(0)
        config = LlamaConfig(
            hidden_size=args.hidden_size,
            intermediate_size=3 * args.hidden_size,
            num_hidden_layers=args.layers,
            num_attention_heads=4,
            num_key_value_heads=4,
            vocab_size=1024,
        )
        LlamaForCausalLM(config).save_pretrained(work / "model")
        environment = {
            **os.environ,
            "OMP_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        command = [
            sys.executable,
            __file__,
            "--world_size",
            str(args.world_size),
            "--rounds",
            str(args.rounds),
        ]
        command += ["--tokens", str(args.tokens), "--work_dir", str(work)]
        ranks = [
            subprocess.Popen([*command, "--rank", str(rank)], env=environment)
            for rank in range(args.world_size)
        ]
        codes = [process.wait() for process in ranks]
        if any(codes):
            sys.exit(f"a rank failed: exit codes {codes}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
