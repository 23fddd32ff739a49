"""benchmarks/bench_debugger.py leaves parts of the debugger out (no-op patches) to name what each
costs: each stage must still record a trace, or the breakdown measures a debugger that gave up."""

import logging

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from benchmarks import debugger_variants
from model_debugging.debugger import tensors


@pytest.fixture(scope="module")
def bench():
    return debugger_variants


@pytest.mark.parametrize("use_repr", [True, False])
def test_every_stage_of_the_breakdown_records_a_trace(bench, use_repr, caplog):
    config = LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=100
    )
    model = LlamaForCausalLM(config).eval()
    input_ids = torch.randint(0, 100, (1, 8))
    with caplog.at_level(logging.WARNING):
        for stage in (*bench.STAGES, "ours"):
            bench.forward_runner(stage, use_repr, model, input_ids)()
    assert not [record.getMessage() for record in caplog.records if "could not record" in record.getMessage()]


def test_the_forward_threads_parts_are_timed_inside_ours(bench, monkeypatch):
    # with torch on fewer threads than cores (OMP_NUM_THREADS=1), the worker would take every
    # tensor's statistics and the forward's thread none: the parts are timed with no core left free
    monkeypatch.setattr(tensors, "core_left_free", lambda: False)
    config = LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=100
    )
    model = LlamaForCausalLM(config).eval()
    input_ids = torch.randint(0, 100, (1, 8))
    timed_functions = [(owner, name) for _, timed in bench.FORWARD_THREAD_PARTS for owner, name in timed]
    before = [vars(owner)[name] for owner, name in timed_functions]
    parts = bench.forward_thread_parts(True, 2, model, input_ids)
    assert list(parts) == [part for part, _ in bench.FORWARD_THREAD_PARTS] + ["context set-up and removal"]
    recording, statistics, reprs = (parts[part] for part, _ in bench.FORWARD_THREAD_PARTS[:3])
    assert all(0 < inside < total for inside, total in zip(statistics, recording, strict=True))
    assert all(0 < inside < total for inside, total in zip(reprs, recording, strict=True))
    assert all(len(values) == 2 and min(values) > 0 for values in parts.values())
    assert [vars(owner)[name] for owner, name in timed_functions] == before  # the timing wrappers are gone


def _instrumented(module: torch.nn.Module) -> bool:
    global_hooks = torch.nn.modules.module._global_forward_hooks
    global_pre_hooks = torch.nn.modules.module._global_forward_pre_hooks
    return bool(
        module._forward_hooks
        or module._forward_pre_hooks
        or "forward" in module.__dict__
        or global_hooks
        or global_pre_hooks
    )


@pytest.mark.parametrize("mechanism", ["bare: module hooks", "bare: forward wrappers", "bare: global hooks"])
def test_each_bare_mechanism_is_on_every_module_during_the_forward_only(bench, mechanism):
    assert mechanism in bench.MECHANISMS
    config = LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=100
    )
    model = LlamaForCausalLM(config).eval()
    input_ids = torch.randint(0, 100, (1, 8))
    with torch.no_grad():
        expected = model(input_ids=input_ids).logits
    with bench.bare_mechanism(mechanism, model):
        assert all(_instrumented(module) for module in model.modules())
        with torch.no_grad():
            assert torch.equal(model(input_ids=input_ids).logits, expected)
    assert not any(_instrumented(module) for module in model.modules())
