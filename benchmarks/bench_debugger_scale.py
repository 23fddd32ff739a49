"""Peak memory of tracing deeper and deeper models with ``use_repr=False``: it must not grow with depth.

Run from the repository root (`make bench` runs it with no flags):

    python benchmarks/bench_debugger_scale.py                       # 8, 16, 32, 64 layers
    python benchmarks/bench_debugger_scale.py --layers 8 32 --traced_modes all_layers --no_plain --check
                                               # the reduced size `make test` runs

The model is a stack of blocks (``Linear`` + ``GELU``) over a ``rows x width`` float32 hidden state,
so each layer writes five activation-sized ``.safetensors`` files. Each measurement runs in a fresh
subprocess that reads its own peak resident set size (``VmHWM`` in ``/proc/self/status``) after one
forward: plain (``torch.no_grad()``, no tracing), traced with every layer recorded
(``do_prune_layers=False``), and traced with layer pruning (the default). If the debugger kept the
tensors it records, the traced peak would grow by the bytes written; written as they are produced,
the overhead over the plain forward stays a constant (the writer's 64 MiB queue and a few recent
activations) while the bytes written grow with depth. ``--check`` exits 1 unless the traced peak
grows (beyond the model's own growth) by less than a quarter of the growth in bytes written.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

MIB = 2**20
MODES = ("plain", "all_layers", "pruned")


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.act = nn.GELU()

    def forward(self, hidden):
        return self.act(self.proj(hidden))


class DeepModel(nn.Module):
    def __init__(self, layers: int, width: int):
        super().__init__()
        self.layers = nn.ModuleList(Block(width) for _ in range(layers))

    def forward(self, hidden):
        for layer in self.layers:
            hidden = layer(hidden)
        return hidden


def peak_rss_bytes() -> int:
    """This process's own peak resident set size (VmHWM, Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def measure(mode: str, layers: int, width: int, rows: int) -> dict:
    """Run one forward in ``mode`` in this (fresh) process and report its peak memory."""
    from model_debugging import model_addition_debugger_context

    torch.manual_seed(0)
    model = DeepModel(layers, width).eval()
    hidden = torch.randn(rows, width)
    model_bytes = sum(parameter.numel() * parameter.element_size() for parameter in model.parameters())
    written = 0
    if mode == "plain":
        with torch.no_grad():
            model(hidden)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_debugger_scale_") as output_dir:
            with model_addition_debugger_context(
                model, debug_path=output_dir, use_repr=False, do_prune_layers=mode == "pruned"
            ):
                model(hidden)
            written = sum(path.stat().st_size for path in Path(output_dir).iterdir())
    return {"peak": peak_rss_bytes(), "model": model_bytes, "written": written}


def measure_in_subprocess(mode: str, layers: int, width: int, rows: int) -> dict:
    command = [sys.executable, __file__, "--child", mode, "--layers", str(layers)]
    command += ["--width", str(width), "--rows", str(rows)]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr}")
    return json.loads(completed.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument(
        "--rows", type=int, default=2048, help="rows of the hidden state (2048 x 256 = 2 MiB)"
    )
    parser.add_argument("--traced_modes", nargs="+", choices=MODES[1:], default=list(MODES[1:]))
    parser.add_argument("--no_plain", action="store_true", help="skip the untraced forwards (faster)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the peak grows with what is written")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(measure(args.child, args.layers[0], args.width, args.rows)))
        return 0

    activation = args.rows * args.width * 4
    print(f"hidden state {args.rows} x {args.width} float32 = {activation / MIB:.1f} MiB; use_repr=False")
    header = ["layers", "model MiB"] + ([] if args.no_plain else ["plain peak"])
    for mode in args.traced_modes:
        header += [f"{mode} peak"] + ([] if args.no_plain else ["overhead"]) + ["written MiB"]
    print(" | ".join(f"{title:>16}" for title in header))
    rows = []
    for layers in args.layers:
        plain = None if args.no_plain else measure_in_subprocess("plain", layers, args.width, args.rows)
        row, cells = {"layers": layers}, []
        for mode in args.traced_modes:
            traced = measure_in_subprocess(mode, layers, args.width, args.rows)
            row["model"] = traced["model"]
            row[mode] = traced
            cells += [traced["peak"]] + ([] if plain is None else [traced["peak"] - plain["peak"]])
            cells += [traced["written"]]
        cells = [row["model"]] + ([] if plain is None else [plain["peak"]]) + cells
        rows.append(row)
        print(" | ".join([f"{layers:>16}", *(f"{value / MIB:>16.1f}" for value in cells)]))

    first, last, mode = rows[0], rows[-1], args.traced_modes[0]
    # what the peak gains beyond the model's own growth; keeping the tensors would add what is written
    growth = (last[mode]["peak"] - first[mode]["peak"]) - (last["model"] - first["model"])
    written_growth = last[mode]["written"] - first[mode]["written"]
    print(
        f"from {first['layers']} to {last['layers']} layers ({mode}): the traced peak grows by "
        f"{growth / MIB:.1f} MiB beyond the model's growth while the bytes written grow by "
        f"{written_growth / MIB:.1f} MiB (ratio {growth / written_growth:.2f}; keeping every tensor would "
        "make it about 1)"
    )
    if args.check and growth >= written_growth / 4:
        print("FAIL: peak memory grows with the tensors written: they are accumulated", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
