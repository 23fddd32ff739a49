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
