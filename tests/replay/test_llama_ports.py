"""Replay on real transformers Llama ports: bugs named at function level, bf16 noise told apart from bugs."""

import pytest
import torch

from model_debugging import ReplayVerdict, compare_traces, replay_trace
from model_debugging.debugger.trace_format.reading import read_trace
from tests.replay import ports
from tests.replay.tracing import ATTENTION_FUNCTIONS, port_of, trace

pytestmark = pytest.mark.integration


def test_wrong_rope_rotation_is_named_at_function_level(tiny_llama, input_ids, tmp_path, monkeypatch):
    reference = tiny_llama()
    port = port_of(reference, ports.port_attention)
    monkeypatch.setattr(ports, "ROTATION", "interleaved")
    reference_trace = trace(
        reference, tmp_path / "reference", input_ids, record_functions=ATTENTION_FUNCTIONS
    )
    port_trace = trace(port, tmp_path / "port", input_ids, record_functions=ATTENTION_FUNCTIONS)

    comparison = compare_traces(reference_trace, port_trace)
    rope = "LlamaForCausalLM.model.layers.0.self_attn.apply_rotary_pos_emb"
    assert comparison.divergence_origin.module_path == rope

    found = replay_trace(reference_trace, port, bisect=True, comparison=comparison)
    assert found.smallest_wrong.module_path == rope
    assert found.smallest_wrong.kind == "function"
    assert found.smallest_wrong.verdict is ReplayVerdict.WRONG


def test_wrong_mask_offset_is_named_at_function_level(tiny_llama, input_ids, tmp_path, monkeypatch):
    reference = tiny_llama()
    port = port_of(reference, ports.port_attention)
    monkeypatch.setattr(ports, "MASK_OFFSET", 1)
    reference_trace = trace(
        reference, tmp_path / "reference", input_ids, record_functions=ATTENTION_FUNCTIONS
    )
    port_trace = trace(port, tmp_path / "port", input_ids, record_functions=ATTENTION_FUNCTIONS)

    attention = "LlamaForCausalLM.model.layers.0.self_attn.eager_attention_forward"
    assert compare_traces(reference_trace, port_trace).divergence_origin.module_path == attention
    # the attention function gets the module itself as first argument: replay passes the port's module
    found = replay_trace(reference_trace, port, bisect=True)
    assert found.smallest_wrong.module_path == attention


def test_a_correct_port_of_the_attention_replays_correct_everywhere(tiny_llama, input_ids, tmp_path):
    reference = tiny_llama()
    reference_trace = trace(
        reference, tmp_path / "reference", input_ids, record_functions=ATTENTION_FUNCTIONS
    )

    result = replay_trace(reference_trace, port_of(reference, ports.port_attention))
    assert {module.verdict for module in result.modules} == {ReplayVerdict.CORRECT}
    assert any(module.kind == "function" for module in result.modules)


def test_a_port_only_noisier_in_bf16_replays_correct_for_every_module(tiny_llama, input_ids, tmp_path):
    reference = tiny_llama(dtype=torch.bfloat16)
    port = port_of(reference, ports.low_precision_norms)
    reference_trace = trace(reference, tmp_path / "reference", input_ids)

    comparison = compare_traces(reference_trace, trace(port, tmp_path / "port", input_ids))
    # its norms' rounding, carried through the layers, crosses even bf16's tolerance: compare says
    # so, and points to replay, which runs each module on the reference's own inputs
    assert comparison.divergence_origin.module_path == "LlamaForCausalLM.model.layers.1.input_layernorm"
    assert any(warning.startswith("bfloat16 rounding grows with depth") for warning in comparison.warnings)
    result = replay_trace(reference_trace, port)
    assert [m.module_path for m in result.modules] == [
        node.module_path for node in read_trace(reference_trace).nodes
    ]
    assert {module.verdict for module in result.modules} == {ReplayVerdict.CORRECT}
    assert max(module.max_abs_diff for module in result.modules) > 0  # noisier, not identical


def test_bisection_isolates_a_wrong_module_in_layer_3_that_compare_places_before_it(
    tiny_llama, input_ids, tmp_path
):
    reference = tiny_llama(layers=4, dtype=torch.bfloat16)
    port = port_of(reference, ports.low_precision_norms)
    port.model.layers[3].mlp.act_fn = ports.GeluMLPActivation()
    reference_trace = trace(reference, tmp_path / "reference", input_ids)

    comparison = compare_traces(reference_trace, trace(port, tmp_path / "port", input_ids))
    # the norms' rounding crosses the tolerance before the wrong activation does
    assert comparison.divergence_origin.module_path == "LlamaForCausalLM.model.layers.3.self_attn.q_proj"
    found = replay_trace(reference_trace, port, bisect=True, comparison=comparison)
    assert found.smallest_wrong.module_path == "LlamaForCausalLM.model.layers.3.mlp.act_fn"
    replayed = {module.module_path for module in found.modules}
    assert "LlamaForCausalLM.model.layers.1.mlp.act_fn" not in replayed  # bisection, not a full replay


def test_noise_from_a_second_reference_run_judges_differences_against_its_spread(
    tiny_llama, input_ids, tmp_path
):
    reference = tiny_llama(layers=4, dtype=torch.bfloat16)
    reference_trace = trace(reference, tmp_path / "reference", input_ids)
    float32_trace = trace(port_of(reference, lambda model: model.float()), tmp_path / "float32", input_ids)
    port = port_of(reference, ports.low_precision_norms)
    port.model.layers[3].mlp.act_fn = ports.GeluMLPActivation()

    result = replay_trace(
        reference_trace,
        port,
        ["model.layers.2.mlp.act_fn", "model.layers.3.mlp.act_fn"],
        noise_from=float32_trace,
    )
    correct, wrong = result.modules
    assert str(correct.noise) == "within reference noise" and correct.verdict is ReplayVerdict.CORRECT
    assert str(wrong.noise).endswith("× above reference noise") and wrong.verdict is ReplayVerdict.WRONG
    assert wrong.noise.ratio > 2


def test_a_torch_function_is_recorded_and_replayed_inside_sdpa_attention(tiny_llama, input_ids, tmp_path):
    reference = tiny_llama()
    reference.config._attn_implementation = "sdpa"
    sdpa = "torch.nn.functional.scaled_dot_product_attention"
    reference_trace = trace(reference, tmp_path / "reference", input_ids, record_functions=[sdpa])

    result = replay_trace(
        reference_trace, reference, ["model.layers.1.self_attn.scaled_dot_product_attention"]
    )
    (call,) = result.modules
    assert call.kind == "function" and call.verdict is ReplayVerdict.CORRECT and call.compared == 1
