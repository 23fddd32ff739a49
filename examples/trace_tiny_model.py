"""Trace one forward of a small bundled toy model with the model addition debugger.

Run from the repository root (this is the debugger step of `make demo`):

    python examples/trace_tiny_model.py --output_dir demo_output/debugger

It writes `TinyDecoder_debug_tree_SUMMARY.json` and `TinyDecoder_debug_tree_FULL_TENSORS.json`
(and our `TinyDecoder_debug_tree_EXTRA.json`) into the output directory, then prints where they
are and an indented view of the call tree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

import torch
from torch import nn

from model_debugging import model_addition_debugger_context, trace_paths


class SelfAttention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        batch, length, width = hidden.shape
        query, key, value = self.qkv(hidden).view(batch, length, 3, self.heads, -1).transpose(1, 3).unbind(2)
        attended = nn.functional.scaled_dot_product_attention(query, key, value, is_causal=True)
        return self.out(attended.transpose(1, 2).reshape(batch, length, width))


class DecoderBlock(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.attention_norm = nn.LayerNorm(width)
        self.attention = SelfAttention(width, heads)
        self.mlp_norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = hidden + self.attention(self.attention_norm(hidden))
        return hidden + self.mlp(self.mlp_norm(hidden))


class TinyDecoder(nn.Module):
    """A four-layer decoder-only language model, small enough to trace in well under a second."""

    def __init__(self, vocab_size: int = 100, width: int = 32, heads: int = 4, layers: int = 4):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, width)
        self.layers = nn.ModuleList(DecoderBlock(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab_size, bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        hidden = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.lm_head(self.norm(hidden))


def tree_lines(node: dict, depth: int = 0, max_depth: int = 3) -> list[str]:
    """One line per call: its path and, for leaves, the shape of a tensor output."""
    outputs = node.get("outputs")
    shape = f"  -> {outputs['shape']}" if isinstance(outputs, dict) and "shape" in outputs else ""
    lines = [f"{'  ' * depth}{node['module_path']}{shape}"]
    if depth < max_depth:
        for child in node.get("children", []):
            lines.extend(tree_lines(child, depth + 1, max_depth))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output_dir", default="demo_output/debugger", help="where the trace files go")
    parser.add_argument("--no_prune", action="store_true", help="keep every layer (do_prune_layers=False)")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = TinyDecoder().eval()
    input_ids = torch.randint(0, 100, (1, 16))
    with contextlib.ExitStack() as stack:
        try:  # an output directory that cannot be used is refused before anything is traced
            stack.enter_context(
                model_addition_debugger_context(
                    model, debug_path=args.output_dir, do_prune_layers=not args.no_prune
                )
            )
        except ValueError as error:
            print(f"{parser.prog}: error: --output_dir: {error}", file=sys.stderr)
            return 2
        model(input_ids)

    paths = trace_paths(args.output_dir, type(model).__name__)
    print(f"summary trace:      {paths.summary}")
    print(f"full-tensors trace: {paths.full_tensors}")
    print(f"our extra records:  {paths.extra}")
    print("call tree (first and last layer kept; leaves show their output shape):")
    tree = json.loads(paths.summary.read_text())
    print("\n".join(f"  {line}" for line in tree_lines(tree)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
