"""Decoder layers and attention of models traced with their default cache are replayed."""

import collections

import pytest
import torch

from model_debugging import ReplayVerdict, model_addition_debugger_context, replay_trace
from tests.ports import t5
from tests.ports.catalog import trace

pytestmark = pytest.mark.integration


def test_every_layer_and_attention_call_of_a_llama_traced_with_its_default_cache_is_replayed(
    tiny_llama, input_ids, tmp_path
):
    model = tiny_llama(layers=4)
    with model_addition_debugger_context(model, debug_path=tmp_path, do_prune_layers=False, use_repr=False):
        model(input_ids)  # use_cache defaults to True: the model makes a DynamicCache and passes it down

    result = replay_trace(tmp_path, model)
    verdicts = collections.Counter(call.verdict for call in result.modules)
    assert verdicts == {ReplayVerdict.CORRECT: len(result.modules)}
    cached = [
        call for call in result.modules if call.module_path.endswith(("self_attn", *map(str, range(4))))
    ]
    assert len(cached) == 8  # 4 decoder layers and their attention, each given kwargs.cache


def test_a_forward_given_a_filled_cache_is_not_replayed_and_says_why(tiny_llama, tmp_path):
    model = tiny_llama()
    with model_addition_debugger_context(model, debug_path=tmp_path, do_prune_layers=False, use_repr=False):
        model.generate(torch.tensor([[1, 2, 3]]), max_new_tokens=2, do_sample=False)

    second_step = replay_trace(
        tmp_path / "LlamaForCausalLM_debug_tree_2_FULL_TENSORS.json", model, ["model.layers.0"]
    )
    (layer,) = second_step.modules
    assert layer.verdict is ReplayVerdict.NOT_REPLAYED
    assert "the DynamicCache may hold earlier tokens" in layer.reason
    assert "trace a forward that starts without a cache" in layer.reason


def test_the_decoder_of_an_encoder_decoder_traced_with_its_default_cache_is_replayed(tmp_path):
    model = t5.reference()
    reference_trace = trace(model, tmp_path, t5.inputs())  # the decoder makes an EncoderDecoderCache
    result = replay_trace(
        reference_trace, model, ["decoder.block.0", "decoder.block.1.layer.1.EncDecAttention"]
    )
    assert [call.verdict for call in result.modules] == [ReplayVerdict.CORRECT] * 2
