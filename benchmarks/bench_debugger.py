"""Speed and memory of the model addition debugger against a plain forward and upstream's.

Run from the repository root (`make bench` runs it with no flags):

    python benchmarks/bench_debugger.py            # the issue's configuration
    python benchmarks/bench_debugger.py --quick    # smaller model, fewer repeats

Times a plain `torch.no_grad()` forward, a forward traced by ours and one traced by
`transformers.model_addition_debugger_context`, in both `use_repr` modes, on a randomly
initialised LlamaForCausalLM (hidden 512, intermediate 1536, 8 layers, 8 heads, 4 KV heads,
256 tokens). Runs are interleaved round-robin in one process and the median is reported, so a
busy machine slows every variant alike; process CPU time (all threads, including our writer
thread) is printed too, as it is less sensitive to other processes on a shared machine. Peak memory is the growth of the peak resident set
size (Linux VmHWM, reset just before) during one warm forward, each variant in a fresh subprocess.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from model_debugging import model_addition_debugger_context

FULL = {"hidden_size": 512, "intermediate_size": 1536, "num_hidden_layers": 8, "num_attention_heads": 8}
QUICK = {"hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 4, "num_attention_heads": 4}
VARIANTS = ("plain", "ours", "upstream")


def build(quick: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    sizes = QUICK if quick else FULL
    model = LlamaForCausalLM(
        LlamaConfig(num_key_value_heads=sizes["num_attention_heads"] // 2, **sizes)
    ).eval()
    input_ids = torch.randint(0, model.config.vocab_size, (1, 128 if quick else 256))
    return model, input_ids


def runner(variant: str, use_repr: bool, model, input_ids) -> Callable[[], tuple[float, float]]:
    """A function running one forward of ``variant``; it returns (wall, process CPU) seconds."""
    from transformers import model_addition_debugger_context as upstream_context

    context = {"ours": model_addition_debugger_context, "upstream": upstream_context}.get(variant)

    def run() -> tuple[float, float]:
        output_dir = tempfile.mkdtemp(prefix="bench_debugger_")
        saved = torch._tensor_str.get_printoptions()
        try:
            start, start_cpu = time.perf_counter(), time.process_time()
            if context is None:
                with torch.no_grad():
                    model(input_ids=input_ids)
            else:
                with context(model, debug_path=output_dir, use_repr=use_repr):
                    model(input_ids=input_ids)
            return time.perf_counter() - start, time.process_time() - start_cpu
        finally:
            torch.set_printoptions(**saved)  # upstream leaves them changed
            shutil.rmtree(output_dir)

    return run


def median_times(use_repr: bool, repeats: int, model, input_ids) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds per variant, runs interleaved round-robin after a warm-up."""
    runs = {variant: runner(variant, use_repr, model, input_ids) for variant in VARIANTS}
    for run in runs.values():
        run()
    samples: dict[str, list[tuple[float, float]]] = {variant: [] for variant in VARIANTS}
    for _ in range(repeats):
        for variant, run in runs.items():
            samples[variant].append(run())
    return {
        variant: (statistics.median(wall for wall, _ in pairs), statistics.median(cpu for _, cpu in pairs))
        for variant, pairs in samples.items()
    }


def peak_memory_mib(variant: str, use_repr: bool, quick: bool) -> float:
    command = [sys.executable, __file__, "--memory_probe", variant, "--use_repr", str(int(use_repr))]
    probe = subprocess.run(
        command + (["--quick"] if quick else []), capture_output=True, text=True, check=True
    )
    return float(probe.stdout.strip())


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise KeyError(field)


def memory_probe(variant: str, use_repr: bool, quick: bool) -> None:
    """Print the peak RSS growth (MiB) of one forward after a warm-up one; nan where /proc is missing."""
    model, input_ids = build(quick)
    run = runner(variant, use_repr, model, input_ids)
    run()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # Linux: reset the peak RSS (VmHWM) to the current RSS
        before = _status_kib("VmRSS")
        run()
        print((_status_kib("VmHWM") - before) / 1024)
    except OSError:
        print(float("nan"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller model, 128 tokens, fewer repeats")
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed runs per variant (default 7, quick 3)"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--memory_probe", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--use_repr", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads:  # on a shared machine, 1 thread makes the ratios far less noisy
        torch.set_num_threads(args.threads)
    if args.memory_probe:
        memory_probe(args.memory_probe, bool(args.use_repr), args.quick)
        return 0

    repeats = args.repeats or (3 if args.quick else 7)
    model, input_ids = build(args.quick)
    print(
        f"LlamaForCausalLM {QUICK if args.quick else FULL}, {input_ids.shape[1]} tokens, median of {repeats} runs"
    )
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(
        f"{'use_repr':>8} {'clock':>5} {'plain ms':>9} {'ours ms':>9} {'upstream ms':>12} {'upstream/ours':>14} {'ours/plain':>11}"
    )
    rows = []
    for use_repr in (True, False):
        times = median_times(use_repr, repeats, model, input_ids)
        for clock, column in (("wall", 0), ("cpu", 1)):
            plain, ours, upstream = (times[variant][column] * 1000 for variant in VARIANTS)
            if clock == "wall":
                rows.append((upstream / ours, ours / plain))
            print(
                f"{use_repr!s:>8} {clock:>5} {plain:9.1f} {ours:9.1f} {upstream:12.1f} "
                f"{upstream / ours:14.2f} {ours / plain:11.2f}"
            )

    print("peak RSS growth during one forward, MiB (fresh process each):")
    for use_repr in (True, False):
        peaks = {variant: peak_memory_mib(variant, use_repr, args.quick) for variant in VARIANTS}
        print(
            f"  use_repr={use_repr!s:<5} "
            + "  ".join(f"{variant} {peak:7.1f}" for variant, peak in peaks.items())
        )

    if args.quick:  # a small model spends relatively more on the 32000-column logits' statistics
        print("the targets are set for the default configuration; run without --quick to check them")
        return 0
    (repr_speedup, repr_overhead), (tensors_speedup, _) = rows
    print(
        f"targets (wall clock): upstream/ours >= 2.0 in both modes ({repr_speedup:.2f}, {tensors_speedup:.2f}); "
        f"ours/plain <= 1.5 with use_repr=True ({repr_overhead:.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
