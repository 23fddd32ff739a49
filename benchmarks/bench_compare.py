"""Throughput and peak memory of ``compare_traces`` on two full-tensor traces.

Traces the debugger benchmark model (a LlamaForCausalLM from a small config, 256 tokens) twice
with ``use_repr=False`` and ``do_prune_layers=False``, the second time with one weight of layer 2's
MLP perturbed, then compares the traces in a fresh subprocess and prints:

- throughput: MB (10**6 bytes) of tensor data read and compared per second (target >= 300);
- peak memory: the subprocess's peak RSS above its RSS just before comparing (interpreter, torch
  and imports), as a multiple of the largest single tensor pair (target < 3).

Then the cost of the automatic alignment, on 32-layer traces, measured side by side in this run:

- Llama -> Phi-3 (fused qkv/gate_up projections, dropouts, other names): aligned automatically
  versus the same comparison given the inferred rename rules with ``align=False`` (the aligned run
  also compares the fused projections, which the baseline leaves unmatched, so the ratio of the
  totals overstates the alignment's cost);
- Llama -> Mistral (identical trees): aligned versus ``align=False`` (nothing to align);

and, for each, the alignment step alone (``align_traces`` on read traces: pairing, identity checks)
as a share of the rest of the comparison (target <= +20 %), and the streaming rate in MB/s
(target >= 300); best of 3 alternating runs.

Run from the repository root::

    .venv/bin/python benchmarks/bench_compare.py            # the debugger benchmark model
    .venv/bin/python benchmarks/bench_compare.py --quick    # a smaller model, a few seconds
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THROUGHPUT_TARGET_MB_S = 300.0
PEAK_TARGET_PAIRS = 3.0
ALIGNMENT_TARGET_RATIO = 1.20
ALIGNMENT_LAYERS = 32

# Runs in the subprocess: its RSS is the comparison's alone, not the tracing's.
_MEASURE = """
import json, sys, time
from model_debugging import compare_traces

def status_bytes(field):  # VmHWM is this process's own peak; ru_maxrss may report the parent's from before exec
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field + ":"))

baseline = status_bytes("VmRSS")
start = time.perf_counter()
result = compare_traces(sys.argv[1], sys.argv[2])
seconds = time.perf_counter() - start
origin = result.divergence_origin.module_path if result.divergence_origin else None
print(json.dumps({"seconds": seconds, "bytes": result.bytes_compared, "baseline": baseline,
                  "peak": status_bytes("VmHWM"), "modules": len(result.modules), "origin": origin}))
"""


def model_config(quick: bool):
    from transformers import LlamaConfig

    if quick:
        return LlamaConfig(
            hidden_size=128, intermediate_size=384, num_hidden_layers=3, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=4096,
        ), 64  # fmt: skip
    return LlamaConfig(
        hidden_size=512, intermediate_size=1536, num_hidden_layers=8, num_attention_heads=8,
        num_key_value_heads=4, vocab_size=32000,
    ), 256  # fmt: skip


def write_traces(directory: Path, quick: bool) -> tuple[Path, Path]:
    """Trace the model into ``directory/reference``, perturb layer 2's MLP, trace into ``candidate``."""
    import torch
    from transformers import LlamaForCausalLM

    from model_debugging import model_addition_debugger_context

    config, tokens = model_config(quick)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    input_ids = torch.randint(0, config.vocab_size, (1, tokens))
    paths = directory / "reference", directory / "candidate"
    for path in paths:
        with model_addition_debugger_context(
            model, debug_path=str(path), do_prune_layers=False, use_repr=False
        ):
            model(input_ids=input_ids)
        with torch.no_grad():
            model.model.layers[2].mlp.gate_proj.weight[0, 0] += 1.0
    return paths


def largest_pair_bytes(reference: Path, candidate: Path) -> int:
    """Size of the largest tensor pair on disk (safetensors adds a header of a few bytes)."""
    from model_debugging.debugger.trace_format.reading import read_trace

    def sizes(path: Path) -> dict[str, int]:
        trace = read_trace(path)
        return {r.file.name: r.file.stat().st_size for node in trace.nodes for r in node.inputs + (node.outputs or ())
                if r.file is not None}  # fmt: skip

    reference_sizes, candidate_sizes = sizes(reference), sizes(candidate)
    return max(size + candidate_sizes.get(name, 0) for name, size in reference_sizes.items())


def measure(reference: Path, candidate: Path) -> dict:
    completed = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(reference), str(candidate)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def report(measured: dict, pair: int) -> list[str]:
    throughput = measured["bytes"] / measured["seconds"] / 1e6
    above_baseline = measured["peak"] - measured["baseline"]
    ratio = above_baseline / pair
    mib = 1024 * 1024
    return [
        f"compared {measured['modules']} module calls, {measured['bytes'] / 1e6:.1f} MB of tensor data "
        f"in {measured['seconds']:.3f} s; divergence origin: {measured['origin']}",
        f"throughput: {throughput:.0f} MB/s (target >= {THROUGHPUT_TARGET_MB_S:.0f}): "
        + ("PASS" if throughput >= THROUGHPUT_TARGET_MB_S else "MISS"),
        f"peak RSS {measured['peak'] / mib:.1f} MiB = interpreter {measured['baseline'] / mib:.1f} MiB "
        f"+ {above_baseline / mib:.1f} MiB; largest tensor pair {pair / mib:.1f} MiB; "
        f"ratio {ratio:.2f} (target < {PEAK_TARGET_PAIRS:.0f}): "
        + ("PASS" if ratio < PEAK_TARGET_PAIRS else "MISS"),
    ]


def alignment_pairs(directory: Path, quick: bool) -> dict[str, tuple[Path, Path]]:
    """32-layer Llama traces against a Phi-3 and a Mistral conversion (tests/compare/porting_pairs.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "compare"))
    from porting_pairs import convert_llama_to_mistral, convert_llama_to_phi3, input_ids, llama, trace

    width, tokens = (64, 32) if quick else (128, 128)
    reference = llama(
        hidden_size=width, intermediate_size=3 * width, num_hidden_layers=ALIGNMENT_LAYERS, vocab_size=1024,
        num_attention_heads=4, num_key_value_heads=2,
    )  # fmt: skip
    ids = input_ids(1024, tokens)
    reference_trace = trace(reference, directory / "llama", ids)
    return {
        name: (reference_trace, trace(convert(reference), directory / name, ids))
        for name, convert in (("phi3", convert_llama_to_phi3), ("mistral", convert_llama_to_mistral))
    }


def report_alignment(pairs: dict[str, tuple[Path, Path]], directory: Path) -> list[str]:
    from model_debugging import align_traces, compare_traces
    from model_debugging.debugger.trace_format.reading import read_trace

    lines = []
    for name, (reference, candidate) in pairs.items():
        rules = directory / f"{name}_renames.yaml"
        rules.write_text(compare_traces(reference, candidate).alignment.rename_rules_yaml)
        timings: dict[str, list[float]] = {"aligned": [], "baseline": [], "alignment step": []}
        results = {}
        for _ in range(3):  # alternate, so all see the same page cache and machine load
            for label, options in (("aligned", {}), ("baseline", {"rename": rules, "align": False})):
                start = time.perf_counter()
                results[label] = compare_traces(reference, candidate, **options)
                timings[label].append(time.perf_counter() - start)
            traces = read_trace(reference), read_trace(candidate)
            start = time.perf_counter()
            align_traces(*traces)
            timings["alignment step"].append(time.perf_counter() - start)
        aligned, baseline, step = (min(timings[label]) for label in ("aligned", "baseline", "alignment step"))
        share = step / (aligned - step)  # what the alignment step adds to the comparison it feeds
        rates = {label: results[label].bytes_compared / min(timings[label]) / 1e6 for label in results}
        lines += [
            f"{name} ({ALIGNMENT_LAYERS} layers): aligned {aligned:.3f} s ({len(results['aligned'].modules)} pairs, "
            f"{rates['aligned']:.0f} MB/s) vs rules + align=False {baseline:.3f} s "
            f"({len(results['baseline'].modules)} pairs, {rates['baseline']:.0f} MB/s): ratio {aligned / baseline:.2f}; "
            f"equivalent: {results['aligned'].equivalent} vs {results['baseline'].equivalent}",
            f"  alignment step {step:.3f} s = +{share:.0%} of the rest of the comparison "
            f"(target <= +{ALIGNMENT_TARGET_RATIO - 1:.0%}): "
            + ("PASS" if share <= ALIGNMENT_TARGET_RATIO - 1 else "MISS")
            + f"; streaming {rates['aligned']:.0f} MB/s (target >= {THROUGHPUT_TARGET_MB_S:.0f}): "
            + ("PASS" if rates["aligned"] >= THROUGHPUT_TARGET_MB_S else "MISS"),
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller model and input (a few seconds)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_compare_") as directory:
        reference, candidate = write_traces(Path(directory), args.quick)
        print("\n".join(report(measure(reference, candidate), largest_pair_bytes(reference, candidate))))
        print("\n".join(report_alignment(alignment_pairs(Path(directory), args.quick), Path(directory))))
    if args.quick:
        print("(--quick: fixed costs dominate such small traces; the targets are set for the full model)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
