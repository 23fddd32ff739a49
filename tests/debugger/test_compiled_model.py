"""A model compiled with ``torch.compile`` before it is traced: the trace is what an eager run gives."""

import os

import pytest
import torch

from model_debugging import model_addition_debugger_context

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "traced",
    [
        "model",  # the way docs/debugger.md shows
        pytest.param(
            "compiled wrapper",
            marks=[
                pytest.mark.slow,
                pytest.mark.skipif(
                    os.environ.get("MODEL_DEBUGGING_SLOW") != "1",
                    reason="set MODEL_DEBUGGING_SLOW=1 (about 10 s)",
                ),
            ],
        ),
    ],
)
def test_a_compiled_llama_is_recorded_as_its_eager_run(tmp_path, traced):
    # Dynamo traced the recording too: statistics read "tensor(6.075309283914976e-05)" (upstream
    # and an eager run: "tensor(6.0753e-05)"), the rotary embedding's outputs were recorded as a
    # repr string, and the compilation printed pages of Dynamo warnings
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2
    )
    model = transformers.LlamaForCausalLM(config).eval()
    input_ids = torch.tensor([[1, 2, 3, 4]])
    with model_addition_debugger_context(model, debug_path=tmp_path / "eager"):
        model(input_ids)
    compiled = torch.compile(model, backend="eager")
    try:
        with model_addition_debugger_context(
            model if traced == "model" else compiled, debug_path=tmp_path / "compiled"
        ):
            compiled(input_ids)
    finally:
        torch._dynamo.reset()

    eager = (tmp_path / "eager" / "LlamaForCausalLM_debug_tree_FULL_TENSORS.json").read_text()
    if traced == "model":
        assert (tmp_path / "compiled" / "LlamaForCausalLM_debug_tree_FULL_TENSORS.json").read_text() == eager
    else:  # named as upstream names it: the wrapper, then the model as its child _orig_mod
        text = (tmp_path / "compiled" / "OptimizedModule_debug_tree_FULL_TENSORS.json").read_text()
        assert '"module_path": "OptimizedModule._orig_mod.model.layers.0.mlp.down_proj"' in text
        assert _statistics_lines(text) == _statistics_lines(eager)


def _statistics_lines(text):
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip().startswith(('"mean"', '"std"', '"min"', '"max"'))
    ]
