"""What the model addition debugger costs on top of a plain forward, part by part, beside upstream's.

Run from the repository root (`make bench` runs it with no flags):

    python benchmarks/bench_debugger.py --threads 1     # the default model, both modes
    python benchmarks/bench_debugger.py --quick         # smaller model, fewer rounds
    python benchmarks/bench_debugger.py --large --threads 1   # 1.1 B parameters in bf16, 32 tokens, use_repr=False

On a machine other sessions share, ``benchmarks/top_priority.sh python benchmarks/bench_debugger.py
--threads 1`` keeps their processes off the bench's cores (see that script).

The default model is a randomly initialised LlamaForCausalLM (hidden 512, intermediate 1536,
8 layers, 8 heads, 4 KV heads) on 256 tokens; ``--large`` is one of 1.1 B parameters in bfloat16
(hidden 2048, intermediate 8192, 16 layers, 32 heads, 8 KV heads) on 32 tokens, traced with
``use_repr=False``.

Each round times, in an order rotated every round so that a busy machine slows them alike:

- ``plain``: the forward under ``torch.no_grad()``; ``plain_again`` once more, for the noise
  (plain/plain would be 1.00 on a quiet machine);
- ``ours`` and ``upstream`` (``transformers.model_addition_debugger_context``);
- ours with parts left out (replaced by no-ops in this process), so that the difference of two
  neighbours is what one part costs: ``hooks`` (the call tree recorded, each tensor's shape and
  dtype, nothing computed or written), ``statistics`` (and each tensor's statistics),
  ``formatting`` (and the repr lines and JSON text; nothing written); ``ours`` adds the writes;
- the floor of ``hooks``: the bare mechanism of a tracer, doing nothing per module call, installed
  on every module before the forward and removed after it, as ours is: a no-op forward pre- and
  post-hook (``with_kwargs``) on each module, a no-op wrapper set as each module's ``forward``
  (what ours and upstream's debugger do; it keeps ``Module.__call__`` on its fast path), or
  torch's global module hooks;
- the floors, outside any forward, on the tensors the trace records (read back from a warm-up
  trace): one read pass per tensor (``torch.sum``: no statistics can read less), the trace's files
  written with nothing else (``safetensors.torch.save_file`` per tensor file, as upstream writes
  them, or the JSON texts with one ``write``), and the same tensors in a single safetensors file
  (what the bytes cost without a file per tensor).

Beside the breakdown, the CPU time of the forward's thread in each part of ours, timed from inside
(``FORWARD_THREAD_PARTS``: the recording steps of the module calls, the statistics and reprs made
in them, then its share of the worker's statistics and the trace's texts and files once the forward is over,
and the context's set-up and removal alone): a thread's CPU time hardly changes with the load of
the machine, so these name where ours spends its time even where the per-round differences of
the breakdown are lost in noise. What the forward's own ops lose to ours (caches, memory) is not
in them.

The breakdown gives the median over the rounds of each part's per-round difference in
milliseconds, the 10th-90th percentile band in brackets, in wall-clock time and in the process's
CPU time (all threads: the writes and statistics done off the forward's thread count there, and
CPU time is far less disturbed by other processes than wall-clock time); the ratios are per
round, as 10th percentile, median and 90th percentile, and the median of the CPU-time ratios. On a shared machine, ``--threads 1`` keeps torch's
threads from waiting for each other.

Peak memory is the growth of the peak resident set size (Linux VmHWM, reset just before) during
one forward after a warm-up forward, each probe in a fresh subprocess: ``--memory_probes`` rounds
per mode, each starting an ours and an upstream probe side by side (plain too in the first
round). The probes run with glibc's mmap threshold fixed at 128 KiB (MALLOC_MMAP_THRESHOLD_):
every tensor of that size or more then gets its own mapping, returned to the system when freed,
so the peak follows the memory in use rather than what the allocator kept from the warm-up.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.debugger_variants import (  # noqa: E402
    MECHANISMS,
    MODELS,
    STAGES,
    Times,
    build,
    forward_runner,
    forward_thread_parts,
)
from model_debugging import model_addition_debugger_context  # noqa: E402

FORWARDS = ("plain", *MECHANISMS, *STAGES, "ours", "upstream", "plain_again")
FLOORS = ("floor: one read pass", "floor: files alone", "floor: one file")
# (name, minuend, subtrahend) of the breakdown, per round
PARTS = (
    ("plain forward", "plain", None),
    ("hooks", "hooks", "plain"),
    *((f"  {name.removeprefix('bare: ')}", name, "plain") for name in MECHANISMS),
    ("statistics", "statistics", "hooks"),
    ("formatting", "formatting", "statistics"),
    ("writes", "ours", "formatting"),
    ("ours (all parts)", "ours", "plain"),
    ("upstream", "upstream", "plain"),
)
RATIOS = {
    "ours/plain": ("ours", "plain"),
    "upstream/plain": ("upstream", "plain"),
    "upstream/ours": ("upstream", "ours"),
    "noise plain/plain": ("plain_again", "plain"),
}
TARGETS = {True: 1.15, False: 1.5}  # median ours/plain, by use_repr


class Floors:
    """The lowest each part could cost: the recorded tensors and trace texts, handled alone."""

    def __init__(self, use_repr: bool, model, input_ids):
        self.tensors: dict[str, torch.Tensor] = {}
        self.texts: dict[str, bytes] = {}
        for mode in {False, use_repr}:
            with tempfile.TemporaryDirectory(prefix="bench_debugger_floor_") as directory:
                saved = torch._tensor_str.get_printoptions()
                with model_addition_debugger_context(model, debug_path=directory, use_repr=mode):
                    model(input_ids=input_ids)
                torch.set_printoptions(**saved)
                if mode is False:  # one tensor per file written (a reused tensor's other names link to it)
                    paths = sorted(Path(directory).glob("*.safetensors"))
                    files = {path.stat().st_ino: path for path in paths}
                    self.tensors = {path.name: load_file(path)["data"] for path in files.values()}
                if mode is use_repr:
                    self.texts = {path.name: path.read_bytes() for path in Path(directory).glob("*.json")}
        self._use_repr = use_repr
        self.bytes = sum(tensor.nbytes for tensor in self.tensors.values())

    def runners(self) -> dict[str, Callable[[], tuple[float, float]]]:
        return {
            "floor: one read pass": self._timed(lambda _: [tensor.sum() for tensor in self.tensors.values()]),
            "floor: files alone": self._timed(self._trace_files),
            "floor: one file": self._timed(lambda directory: save_file(self.tensors, str(directory / "all"))),
        }

    def _trace_files(self, directory: Path) -> None:
        if not self._use_repr:
            for name, tensor in self.tensors.items():
                save_file({"data": tensor}, str(directory / name))
        for name, data in self.texts.items():
            with open(directory / name, "wb") as file:
                file.write(data)

    @staticmethod
    def _timed(work: Callable[[Path], object]) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            directory = Path(tempfile.mkdtemp(prefix="bench_debugger_floor_"))
            try:
                start, start_cpu = time.perf_counter(), time.process_time()
                work(directory)
                return time.perf_counter() - start, time.process_time() - start_cpu
            finally:
                shutil.rmtree(directory)

        return run


def timed_rounds(use_repr: bool, rounds: int, model, input_ids) -> tuple[Times, Times, Floors]:
    """Wall-clock and process CPU milliseconds of every forward and floor, per round.

    Each round runs each once, in an order rotated every round.
    """
    floors = Floors(use_repr, model, input_ids)
    runs = {variant: forward_runner(variant, use_repr, model, input_ids) for variant in FORWARDS}
    runs.update(floors.runners())
    for run in runs.values():  # warm-up
        run()
    names = list(runs)
    wall: Times = {name: [] for name in names}
    cpu: Times = {name: [] for name in names}
    for number in range(rounds):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            seconds, cpu_seconds = runs[name]()
            wall[name].append(seconds * 1000)
            cpu[name].append(cpu_seconds * 1000)
    return wall, cpu, floors


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile, interpolated between the sorted values."""
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _band(values: list[float], digits: int = 1) -> str:
    return f"{statistics.median(values):.{digits}f} [{percentile(values, 0.1):.{digits}f}, {percentile(values, 0.9):.{digits}f}]"


def _part(times: Times, minuend: str, subtrahend: str | None) -> list[float]:
    baseline = times[subtrahend] if subtrahend else [0.0] * len(times[minuend])
    return [a - b for a, b in zip(times[minuend], baseline, strict=True)]


def report(use_repr: bool, wall: Times, cpu: Times, floors: Floors, inside: Times) -> dict[str, float]:
    """Print the breakdown and ratios of one mode; return the median of each ratio."""
    plain = statistics.median(wall["plain"])
    files = "the 3 JSON files" if use_repr else f"{len(floors.tensors)} tensor files and 3 JSON files"
    floor_of = {
        "statistics": ("floor: one read pass", f"one torch.sum per recorded tensor ({len(floors.tensors)})"),
        "writes": ("floor: files alone", f"{files} written alone"),
    }
    print(
        f"use_repr={use_repr}: ms per forward, median [10th, 90th percentile] of the per-round values; "
        "process CPU ms beside"
    )
    print(f"  {'part':<17} {'wall clock':>24} {'of plain':>8} {'CPU':>24}   floor (wall, CPU)")
    for name, minuend, subtrahend in PARTS:
        values = _part(wall, minuend, subtrahend)
        share = f"{100 * statistics.median(values) / plain:+6.1f} %" if subtrahend else ""
        line = f"  {name:<17} {_band(values):>24} {share:>8} {_band(_part(cpu, minuend, subtrahend)):>24}"
        if name in floor_of:
            floor, what = floor_of[name]
            line += f"   {statistics.median(wall[floor]):.1f}, {statistics.median(cpu[floor]):.1f}: {what}"
        print(line)
    if not use_repr:
        print(
            f"  {'':<76}   {statistics.median(wall['floor: one file']):.1f}, "
            f"{statistics.median(cpu['floor: one file']):.1f}: the same {floors.bytes / 2**20:.1f} MiB of "
            "tensors in one safetensors file"
        )
    print("  the forward's thread in ours, CPU ms per forward, median [10th, 90th percentile]:")
    for part, values in inside.items():
        print(f"    {part:<66} {_band(values):>20}")
    medians = {}
    print(f"  {'ratio (per round)':<22} {'p10':>6} {'median':>7} {'p90':>6}   CPU median")
    for name, (numerator, denominator) in RATIOS.items():
        values = [a / b for a, b in zip(wall[numerator], wall[denominator], strict=True)]
        cpu_values = [a / b for a, b in zip(cpu[numerator], cpu[denominator], strict=True)]
        medians[name] = statistics.median(values)
        print(
            f"  {name:<22} {percentile(values, 0.1):6.2f} {medians[name]:7.2f} {percentile(values, 0.9):6.2f}"
            f"   {statistics.median(cpu_values):6.2f}"
        )
    return medians


# glibc: allocations from 128 KiB get their own mapping, unmapped on free (no adaptive threshold)
_PROBE_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": "131072"}


def peak_memory_mib(use_repr: bool, size: str, probes: int, threads: int | None) -> dict[str, list[float]]:
    """Peak RSS growth (MiB) of each variant's probes; ours and upstream start side by side in each round."""
    environment = {**os.environ, **_PROBE_ENVIRONMENT}
    peaks: dict[str, list[float]] = {"plain": [], "ours": [], "upstream": []}
    for number in range(probes):
        variants = ("plain", "ours", "upstream") if number == 0 else ("ours", "upstream")
        command = [sys.executable, __file__, "--size", size, "--use_repr", str(int(use_repr))]
        command += ["--threads", str(threads)] if threads else []
        running = {
            variant: subprocess.Popen(
                [*command, "--memory_probe", variant], stdout=subprocess.PIPE, text=True, env=environment
            )
            for variant in variants
        }
        for variant, probe in running.items():
            output, _ = probe.communicate()
            if probe.returncode != 0:
                raise RuntimeError(f"the {variant} memory probe failed (exit code {probe.returncode})")
            peaks[variant].append(float(output.strip()))
    return peaks


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise KeyError(field)


def memory_probe(variant: str, use_repr: bool, size: str) -> None:
    """Print the peak RSS growth (MiB) of one forward after a warm-up one; nan where /proc is missing."""
    model, input_ids = build(size)
    run = forward_runner(variant, use_repr, model, input_ids)
    run()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # Linux: reset the peak RSS (VmHWM) to the current RSS
        before = _status_kib("VmRSS")
        run()
        print((_status_kib("VmHWM") - before) / 1024)
    except OSError:
        print(float("nan"))


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Upstream logs each trace file it writes at INFO on some versions: keep the output to the figures."""
    from transformers.utils import logging as transformers_logging

    level = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(level)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--quick", action="store_true", help="smaller model, 128 tokens, 5 rounds")
    sizes.add_argument(
        "--large", action="store_true", help="1.1 B parameters in bfloat16, 32 tokens, use_repr=False only"
    )
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds per mode (default 9, quick 5)")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch intra-op threads (default: torch's; 1 on a busy machine)",
    )
    parser.add_argument(
        "--memory_probes", type=int, default=3, help="rounds of memory probes per mode (default 3; 0: none)"
    )
    parser.add_argument("--size", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--memory_probe", choices=("plain", "ours", "upstream"), help=argparse.SUPPRESS)
    parser.add_argument("--use_repr", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    size = args.size or ("quick" if args.quick else "large" if args.large else "default")
    if args.threads:  # on a shared machine, 1 thread makes the ratios far less noisy
        torch.set_num_threads(args.threads)
    if args.memory_probe:
        memory_probe(args.memory_probe, bool(args.use_repr), size)
        return 0

    rounds = args.rounds or (5 if size == "quick" else 9)
    modes = (False,) if size == "large" else (True, False)
    model, input_ids = build(size)
    parameters = sum(parameter.numel() for parameter in model.parameters())
    print(
        f"LlamaForCausalLM {MODELS[size]}, {parameters / 1e9:.2f} B parameters in "
        f"{next(model.parameters()).dtype}, {input_ids.shape[1]} tokens"
    )
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {rounds} rounds of {', '.join(FORWARDS)}"
    )
    print(f"and the floors; load average at the start {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
    medians = {}
    with _quiet_transformers():
        for use_repr in modes:
            wall, cpu, floors = timed_rounds(use_repr, rounds, model, input_ids)
            inside = forward_thread_parts(use_repr, rounds, model, input_ids)
            medians[use_repr] = report(use_repr, wall, cpu, floors, inside)
    print(f"load average at the end {' '.join(f'{load:.1f}' for load in os.getloadavg())}")

    memory_ratios = {}
    if args.memory_probes:
        print(
            f"peak RSS growth during one warm forward, MiB: median of {args.memory_probes} probes (plain: 1), "
            f"fresh process each, {' '.join(f'{key}={value}' for key, value in _PROBE_ENVIRONMENT.items())}"
        )
        for use_repr in modes:
            peaks = peak_memory_mib(use_repr, size, args.memory_probes, args.threads)
            median_mib = {variant: statistics.median(values) for variant, values in peaks.items()}
            memory_ratios[use_repr] = median_mib["ours"] / median_mib["upstream"]
            print(
                f"  use_repr={use_repr!s:<5} "
                + "  ".join(f"{variant} {peak:6.1f}" for variant, peak in median_mib.items())
                + f"  ours/upstream {memory_ratios[use_repr]:.3f}"
                + f"  (ours {min(peaks['ours']):.1f}-{max(peaks['ours']):.1f},"
                + f" upstream {min(peaks['upstream']):.1f}-{max(peaks['upstream']):.1f})"
            )
    if size == "quick":  # a small model spends relatively more on the 32000-column logits' statistics
        print("the targets are set for the default configuration; run without --quick to check them")
        return 0
    print(
        "targets: median ours/plain "
        + ", ".join(
            f"<= {TARGETS[mode]} with use_repr={mode} ({medians[mode]['ours/plain']:.2f}, "
            f"noise {medians[mode]['noise plain/plain']:.2f})"
            for mode in modes
        )
        + "; peak RSS growth ours/upstream <= 1 ("
        + (", ".join(f"{memory_ratios[mode]:.3f}" for mode in modes) if memory_ratios else "not measured")
        + ")"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
