"""The forwards ``bench_debugger.py`` times, each a function of its own: the plain forward, ours and
upstream's debugger, ours with parts left out (no-op patches), and the bare mechanisms a tracer
can use; and the forward thread's CPU time in each part of ours, timed from inside.

The benchmark's docstring says what each variant measures; ``tests/debugger/test_bench_breakdown.py``
checks that each still records a trace (a stage whose debugger gave up would measure nothing).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from unittest import mock

import torch

import model_debugging.debugger.tensors as tensor_records
import model_debugging.debugger.trace_format.writing as trace_writing
from model_debugging import model_addition_debugger_context
from model_debugging.debugger.background import BackgroundWork
from model_debugging.debugger.tracer import CallTracer

MODELS = {
    "default": {
        "hidden_size": 512,
        "intermediate_size": 1536,
        "num_hidden_layers": 8,
        "num_attention_heads": 8,
    },
    "quick": {"hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 4, "num_attention_heads": 4},
    "large": {
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
    },
}
# large: a bfloat16 forward of 1.1 B parameters on 256 tokens takes about 65 s on one CPU thread
# (10 s on 32), and a round runs 14 of them
TOKENS = {"default": 256, "quick": 128, "large": 32}
# ours with parts left out; each stage adds one part to the one before, "ours" adds the writes
STAGES = ("hooks", "statistics", "formatting")
# the bare mechanisms a tracer can use, each doing nothing: the floor of the "hooks" stage
MECHANISMS = ("bare: module hooks", "bare: forward wrappers", "bare: global hooks")
# (part, what is timed): the forward thread's CPU time in each, ours only; indented parts are inside the one above
FORWARD_THREAD_PARTS = (
    ("recording the module calls", ((CallTracer, "enter"), (CallTracer, "exit"))),
    ("  statistics in them", ((tensor_records, "tensor_statistics"),)),
    ("  reprs in them", ((tensor_records, "tensor_repr"),)),
    # the worker's statistics it has not started at the next recording step (the worker is behind)
    ("  statistics taken over from the worker", ((BackgroundWork, "take_over"),)),
    # its CPU time, not its wait: the share it takes of the worker's pass over the logits, then the entries' text
    ("after the forward: the worker's statistics, completing the entries", ((CallTracer, "finish"),)),
    ("after the forward: trace texts and files", ((trace_writing.TraceWriter, "write"),)),
)


def build(size: str):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    sizes = dict(MODELS[size])
    sizes.setdefault("num_key_value_heads", sizes["num_attention_heads"] // 2)
    dtype = torch.bfloat16 if size == "large" else torch.float32
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # made in bfloat16 directly: no float32 copy of 1.2 B parameters
    try:
        model = LlamaForCausalLM(LlamaConfig(dtype=dtype, **sizes)).eval()
    finally:
        torch.set_default_dtype(default_dtype)
    input_ids = torch.randint(0, model.config.vocab_size, (1, TOKENS[size]))
    return model, input_ids


def _left_out(stage: str) -> list:
    """The patches that leave out of ours what ``stage`` does not include."""
    no_statistics = [
        mock.patch.object(tensor_records, "tensor_statistics", lambda tensor, options: ({}, None)),
        # create: an older debugger, measured by this same script, computes every statistic in place
        mock.patch.object(tensor_records, "threads_off_thread", lambda tensor: None, create=True),
    ]
    no_repr = mock.patch.object(tensor_records, "tensor_repr", lambda tensor, options: "")
    no_tensor_files = [
        mock.patch.object(tensor_records.ValueSerializer, "_write", lambda self, name, tensor: None),
        mock.patch.object(tensor_records.ValueSerializer, "_link", lambda self, existing, name: None),
    ]
    no_trace_files = mock.patch.object(trace_writing, "_write_trace_file", lambda path, data: None)
    no_json_text = [
        mock.patch.object(trace_writing, "dumps_trace_texts", lambda tree: ("", "")),
        mock.patch.object(trace_writing, "extra_text", lambda *arguments: ""),
    ]
    writes = [*no_tensor_files, no_trace_files]
    return {
        "hooks": [*no_statistics, no_repr, *no_json_text, *writes],
        "statistics": [no_repr, *no_json_text, *writes],
        "formatting": writes,
    }[stage]


def _no_op(*arguments: object, **keywords: object) -> None:
    return None


@contextlib.contextmanager
def bare_mechanism(name: str, model) -> Iterator[None]:
    """One of :data:`MECHANISMS` on every module of ``model`` while the body runs."""
    modules = list(model.modules())
    if name == "bare: module hooks":
        handles = [
            handle
            for module in modules
            for handle in (
                module.register_forward_pre_hook(_no_op, with_kwargs=True),
                module.register_forward_hook(_no_op, with_kwargs=True),
            )
        ]
    elif name == "bare: global hooks":
        handles = [
            torch.nn.modules.module.register_module_forward_pre_hook(_no_op),
            torch.nn.modules.module.register_module_forward_hook(_no_op, with_kwargs=True),
        ]
    else:
        handles = []
        for module in modules:
            module.forward = _pass_through(module.forward)
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
        if name == "bare: forward wrappers":
            for module in modules:
                del module.forward


def _pass_through(forward: Callable) -> Callable:
    """A wrapper of ``forward`` that only calls it: one Python frame per call, as any wrapper adds."""

    def wrapper(*args: object, **kwargs: object) -> object:
        return forward(*args, **kwargs)

    return wrapper


def forward_runner(variant: str, use_repr: bool, model, input_ids) -> Callable[[], tuple[float, float]]:
    """A function running one forward of ``variant``; it returns its wall-clock and process CPU seconds."""
    from transformers import model_addition_debugger_context as upstream_context

    variant = variant.removesuffix("_again")
    context = upstream_context if variant == "upstream" else model_addition_debugger_context

    def run() -> tuple[float, float]:
        output_dir = tempfile.mkdtemp(prefix="bench_debugger_")
        saved = torch._tensor_str.get_printoptions()
        try:
            with contextlib.ExitStack() as stack:
                for patch in _left_out(variant) if variant in STAGES else ():
                    stack.enter_context(patch)
                start, start_cpu = time.perf_counter(), time.process_time()
                if variant == "plain":
                    with torch.no_grad():
                        model(input_ids=input_ids)
                elif variant in MECHANISMS:
                    with bare_mechanism(variant, model), torch.no_grad():
                        model(input_ids=input_ids)
                else:
                    with context(model, debug_path=output_dir, use_repr=use_repr):
                        model(input_ids=input_ids)
                return time.perf_counter() - start, time.process_time() - start_cpu
        finally:
            torch.set_printoptions(**saved)  # upstream leaves them changed
            shutil.rmtree(output_dir)

    return run


Times = dict[str, list[float]]  # milliseconds per round, by forward or floor


def forward_thread_parts(use_repr: bool, rounds: int, model, input_ids) -> Times:
    """The forward thread's CPU milliseconds in each of :data:`FORWARD_THREAD_PARTS` of ours, per round,
    and in the context's set-up and removal without a forward."""
    forward_thread = threading.get_ident()
    spent: collections.Counter[str] = collections.Counter()

    def timed(part: str, function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*arguments: object, **keywords: object) -> object:
            if threading.get_ident() != forward_thread:
                return function(*arguments, **keywords)
            start = time.thread_time_ns()
            try:
                return function(*arguments, **keywords)
            finally:
                spent[part] += time.thread_time_ns() - start

        return wrapper

    run = forward_runner("ours", use_repr, model, input_ids)
    times: Times = {part: [] for part, _ in FORWARD_THREAD_PARTS}
    times["context set-up and removal"] = []
    with contextlib.ExitStack() as stack:
        for part, timed_functions in FORWARD_THREAD_PARTS:
            for owner, name in timed_functions:
                stack.enter_context(mock.patch.object(owner, name, timed(part, getattr(owner, name))))
        run()  # warm-up
        for _ in range(rounds):
            spent.clear()
            run()
            for part, _ in FORWARD_THREAD_PARTS:
                times[part].append(spent[part] / 1e6)
    with tempfile.TemporaryDirectory(prefix="bench_debugger_") as directory:
        saved = torch._tensor_str.get_printoptions()
        for _ in range(rounds):
            start = time.thread_time_ns()
            with model_addition_debugger_context(model, debug_path=directory, use_repr=use_repr):
                pass
            times["context set-up and removal"].append((time.thread_time_ns() - start) / 1e6)
        torch.set_printoptions(**saved)
    return times
