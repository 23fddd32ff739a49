"""Cost of `@capture_outputs` on a toy decoder: nothing requested, hooks idle, and capturing.

Run from the repo root: `.venv/bin/python benchmarks/bench_capture.py` (about 20 s). Every variant
runs copies of the same weights on the same input once per round, in rotating order, so drift in
machine load hits all of them alike; each ratio is the median over rounds of (variant time /
undecorated time), and an undecorated copy shows the noise floor of that comparison.
Target: decorated-without-capture within 2% of the undecorated forward.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import nn

from model_debugging.output_capturing import ModelOutput, capture_outputs


@dataclass
class DecoderOutput(ModelOutput):
    last_hidden_state: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class Attention(nn.Module):
    def __init__(self, size: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(size, 3 * size)
        self.out = nn.Linear(size, size)

    def forward(self, hidden):
        batch, length, size = hidden.shape
        q, k, v = self.qkv(hidden).view(batch, length, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        weights = (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).softmax(-1)
        mixed = (weights @ v).transpose(1, 2).reshape(batch, length, size)
        return self.out(mixed), weights


class Block(nn.Module):
    def __init__(self, size: int, heads: int):
        super().__init__()
        self.attn_norm = nn.LayerNorm(size)
        self.self_attn = Attention(size, heads)
        self.mlp_norm = nn.LayerNorm(size)
        self.mlp = nn.Sequential(nn.Linear(size, 4 * size), nn.GELU(), nn.Linear(4 * size, size))

    def forward(self, hidden):
        hidden = hidden + self.self_attn(self.attn_norm(hidden))[0]
        return hidden + self.mlp(self.mlp_norm(hidden))


class PlainDecoder(nn.Module):
    """The forward a model author would write without the decorator."""

    _can_record_outputs = {"hidden_states": Block, "attentions": Attention}

    def __init__(self, vocab: int, size: int, heads: int, layers: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, size)
        self.layers = nn.ModuleList(Block(size, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(size)

    def forward(self, input_ids, **kwargs):
        hidden = self.embed(input_ids)
        for layer in self.layers:
            hidden = layer(hidden)
        return DecoderOutput(last_hidden_state=self.norm(hidden))


class Decoder(PlainDecoder):
    forward = capture_outputs(PlainDecoder.forward)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden_size", type=int, default=256)
    parser.add_argument("--seq_len", type=int, default=128)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)  # one core: less scheduler noise on a shared machine
    plain = PlainDecoder(vocab=1000, size=args.hidden_size, heads=4, layers=args.layers).eval()

    def decorated_copy() -> Decoder:
        # hooks live on modules, so every decorated variant gets its own copy of the same weights
        model = Decoder(vocab=1, size=1, heads=1, layers=0).eval()
        twin = copy.deepcopy(plain)
        model.embed, model.layers, model.norm = twin.embed, twin.layers, twin.norm
        return model

    control, fresh, hooked = copy.deepcopy(plain), decorated_copy(), decorated_copy()
    input_ids = torch.randint(0, 1000, (1, args.seq_len))
    variants = {
        "undecorated": lambda: plain(input_ids),
        "undecorated copy (noise floor)": lambda: control(input_ids),
        "decorated, nothing requested, no hooks yet": lambda: fresh(input_ids),
        "decorated, nothing requested, hooks idle": lambda: hooked(input_ids),
        "decorated, capturing hidden_states + attentions": lambda: hooked(
            input_ids, output_hidden_states=True, output_attentions=True
        ),
    }
    names = list(variants)
    times = {name: [] for name in names}
    ratios = {name: [] for name in names}
    with torch.no_grad():
        hooked(input_ids, output_hidden_states=True)  # installs the hooks, untimed
        for round_index in range(-5, args.rounds):  # 5 warm-up rounds, then timed ones
            shift = round_index % len(names)  # rotate so no variant always runs first
            elapsed = {}
            for name in names[shift:] + names[:shift]:
                start = time.perf_counter()
                variants[name]()
                elapsed[name] = time.perf_counter() - start
            if round_index >= 0:
                for name in names:
                    times[name].append(elapsed[name])
                    ratios[name].append(elapsed[name] / elapsed["undecorated"])

    baseline = statistics.median(times["undecorated"])
    print(
        f"toy decoder: {args.layers} layers, hidden {args.hidden_size}, seq {args.seq_len}, "
        f"{args.rounds} rounds, 1 thread; ratio = median over rounds of variant / undecorated"
    )
    for name in names:
        print(
            f"  {name:<50} median {statistics.median(times[name]) * 1e3:7.2f} ms"
            f"   ratio {statistics.median(ratios[name]):.3f}"
        )
    print("  target: decorated without capture within 2% of undecorated (ratio <= 1.020)")
    wrapper, idle_hook = fixed_costs()
    hooked_calls = 2 * args.layers  # each block and its attention
    print("fixed costs, from many calls of an empty forward (less sensitive to machine load):")
    print(f"  decorator per forward call, nothing requested   {wrapper * 1e6:6.2f} us")
    print(f"  one idle hook per hooked module call            {idle_hook * 1e6:6.2f} us")
    implied = wrapper + hooked_calls * idle_hook
    print(
        f"  => on the toy decoder ({hooked_calls} hooked modules): {implied * 1e6:.1f} us per forward, "
        f"{implied / baseline:.2%} of the undecorated median"
    )


class Leaf(nn.Module):
    def forward(self, x):
        return x


class PlainShell(nn.Module):
    """A forward that does nothing but call one leaf: what remains is the decorator's own cost."""

    _can_record_outputs = {"hidden_states": Leaf}

    def __init__(self):
        super().__init__()
        self.config = SimpleNamespace(output_hidden_states=False, return_dict=True)
        self.leaf = Leaf()

    def forward(self, x, **kwargs):
        return DecoderOutput(last_hidden_state=self.leaf(x))


class Shell(PlainShell):
    forward = capture_outputs(PlainShell.forward)


def fixed_costs(calls: int = 20000, repeats: int = 7) -> tuple[float, float]:
    """Seconds added per forward by the decorator, and per hooked module call by an idle hook."""
    x = torch.zeros(1)
    plain, fresh, idle = PlainShell(), Shell(), Shell()
    idle(x, output_hidden_states=True)

    def per_call(model) -> float:
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                model(x)
            runs.append((time.perf_counter() - start) / calls)
        return statistics.median(runs)

    base, wrapper, hooked = per_call(plain), per_call(fresh), per_call(idle)
    return max(wrapper - base, 0.0), max(hooked - wrapper, 0.0)


if __name__ == "__main__":
    main()
