"""generate() runs one top-level forward per new token: each gets its own trace files."""

import json

import pytest
import torch

from model_debugging import model_addition_debugger_context

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.integration


def test_generate_steps_are_numbered(tmp_path):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=100,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    prompt = torch.tensor([[1, 2, 3, 4]])
    with model_addition_debugger_context(model, debug_path=tmp_path):
        generated = model.generate(prompt, max_new_tokens=3, do_sample=False, pad_token_id=0)
    assert generated.shape == (1, 7)
    assert "forward" not in vars(model)

    names = sorted(path.name for path in tmp_path.glob("*_SUMMARY.json"))
    assert names == [
        "LlamaForCausalLM_debug_tree_2_SUMMARY.json",
        "LlamaForCausalLM_debug_tree_3_SUMMARY.json",
        "LlamaForCausalLM_debug_tree_SUMMARY.json",
    ]
    first = json.loads((tmp_path / "LlamaForCausalLM_debug_tree_SUMMARY.json").read_text())
    third = json.loads((tmp_path / "LlamaForCausalLM_debug_tree_3_SUMMARY.json").read_text())
    assert first["inputs"]["kwargs"]["input_ids"]["shape"] == "torch.Size([1, 4])"
    assert (
        third["inputs"]["kwargs"]["input_ids"]["shape"] == "torch.Size([1, 1])"
    )  # one new token, with cache


def test_the_encoder_run_of_an_encoder_decoder_generate_is_recorded_as_the_first_trace(tmp_path):
    config = transformers.T5Config(
        vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.T5ForConditionalGeneration(config).eval()
    prompt = torch.tensor([[5, 6, 7, 8, 9]])
    with model_addition_debugger_context(model, debug_path=tmp_path, do_prune_layers=False):
        generated = model.generate(prompt, max_new_tokens=3, min_new_tokens=3, do_sample=False)
    assert generated.shape == (1, 4)  # the start token and three new ones
    assert "forward" not in vars(model.encoder)

    traces = {
        path.name: json.loads(path.read_text()) for path in tmp_path.glob("*_SUMMARY.json")
    }  # the encoder run, then one forward per new token
    assert len(traces) == 4
    encoder = traces["T5ForConditionalGeneration_debug_tree_SUMMARY.json"]
    assert encoder["module_path"] == "T5ForConditionalGeneration.encoder"
    assert encoder["inputs"]["kwargs"]["input_ids"]["shape"] == "torch.Size([1, 5])"
    assert [child["module_path"] for child in encoder["children"] if "block" in child["module_path"]] == [
        "T5ForConditionalGeneration.encoder.block.0",
        "T5ForConditionalGeneration.encoder.block.1",
    ]
    for step in (2, 3, 4):
        forward = traces[f"T5ForConditionalGeneration_debug_tree_{step}_SUMMARY.json"]
        assert forward["module_path"] == "T5ForConditionalGeneration"
        assert {"decoder_input_ids", "encoder_outputs"} <= set(forward["inputs"]["kwargs"])
