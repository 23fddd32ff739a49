"""Fixtures for replay tests: tiny transformers Llama models (no download: built from a small config)."""

import pytest
import torch


@pytest.fixture
def tiny_llama():
    transformers = pytest.importorskip("transformers")

    def build(layers: int = 2, dtype: torch.dtype = torch.float32):
        config = transformers.LlamaConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=layers, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=100, attn_implementation="eager", initializer_range=0.2,
        )  # fmt: skip
        torch.manual_seed(0)
        return transformers.LlamaForCausalLM(config).to(dtype).eval()

    return build


@pytest.fixture
def input_ids():
    return torch.randint(0, 100, (1, 8), generator=torch.Generator().manual_seed(1))
