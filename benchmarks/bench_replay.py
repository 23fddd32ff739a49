"""Cost of replaying every recorded call of an 8-layer Llama trace, against one traced forward.

Traces the debugger benchmark model (a LlamaForCausalLM from a small config, 8 layers, 256
tokens) with ``use_repr=False`` and ``do_prune_layers=False``, then replays every recorded call
of that trace on the same model (each call run alone on its recorded inputs and judged), and
prints both times side by side and their ratio (target <= 3). Each is the best of ``--repeat`` runs.

Run from the repository root::

    .venv/bin/python benchmarks/bench_replay.py            # the debugger benchmark model
    .venv/bin/python benchmarks/bench_replay.py --quick    # a smaller model, a few seconds
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import torch

from model_debugging import model_addition_debugger_context, replay_trace

RATIO_TARGET = 3.0


def build_model(quick: bool) -> tuple[torch.nn.Module, torch.Tensor]:
    from transformers import LlamaConfig, LlamaForCausalLM

    layers, hidden, tokens = (8, 128, 64) if quick else (8, 512, 256)
    config = LlamaConfig(
        hidden_size=hidden, intermediate_size=3 * hidden, num_hidden_layers=layers, num_attention_heads=8,
        num_key_value_heads=4, vocab_size=32000,
    )  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    return model, torch.randint(0, config.vocab_size, (1, tokens))


def traced_forward_seconds(model: torch.nn.Module, input_ids: torch.Tensor, directory: Path) -> float:
    shutil.rmtree(directory, ignore_errors=True)
    start = time.perf_counter()
    with model_addition_debugger_context(model, debug_path=directory, do_prune_layers=False, use_repr=False):
        model(input_ids, use_cache=False)
    return time.perf_counter() - start


def replay_seconds(model: torch.nn.Module, directory: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    result = replay_trace(directory, model)
    seconds = time.perf_counter() - start
    return seconds, len(result.modules), len(result.wrong)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller model")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the best is kept")
    args = parser.parse_args()
    model, input_ids = build_model(args.quick)
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch) / "trace"
        traced_forward_seconds(model, input_ids, Path(scratch) / "warm-up")
        traced = min(traced_forward_seconds(model, input_ids, directory) for _ in range(args.repeat))
        runs = [replay_seconds(model, directory) for _ in range(args.repeat)]
    replayed, calls, wrong = min(runs)
    ratio = replayed / traced
    print(f"model: 8-layer LlamaForCausalLM, {input_ids.shape[1]} tokens, {calls} recorded calls")
    print(f"one traced forward (use_repr=False): {traced:.3f} s")
    print(f"replay of every recorded call:        {replayed:.3f} s ({wrong} wrong on identical inputs)")
    verdict = "OK" if ratio <= RATIO_TARGET else "ABOVE TARGET"
    print(f"ratio replay / traced forward: {ratio:.2f} (target <= {RATIO_TARGET:g}): {verdict}")


if __name__ == "__main__":
    main()
