"""Fixtures of the debugger's tests: hand-written traces, torch on two intra-op threads, a tiny Llama."""

import pytest
import torch

from tests.support.traces import toy_trace, trace_writer

__all__ = ["toy_trace", "trace_writer"]  # fixtures


@pytest.fixture
def two_threads():
    """The traced code's torch on 2 intra-op threads (a sum may then add in another order), restored after."""
    saved = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(saved)


def _tiny_llama():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=1000,
    )
    return transformers.LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def tiny_llama():
    """A randomly initialised LlamaForCausalLM of 3 layers of hidden size 64 and 1000 tokens (needs transformers)."""
    return _tiny_llama()


@pytest.fixture
def fresh_llama():
    """The same model, made anew for each test: for a test that changes it (a hook it leaves on it)."""
    return _tiny_llama()
