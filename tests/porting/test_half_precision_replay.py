"""debug_port in half precision without the float32 copy (``--no_float32_noise``): rounding grows
through the layers of a correct port until it crosses any fixed tolerance, so when compare finds
calls that differ, replay's bisection decides."""

import pytest

from model_debugging.porting.command import main as debug_port_main

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")

SCRIPT = """
import torch, transformers
from tests.ports import llama


def build_reference():
    config = transformers.LlamaConfig(
        vocab_size=99, hidden_size=64, intermediate_size=128, num_hidden_layers=8, num_attention_heads=8,
        num_key_value_heads=8, max_position_embeddings=128,
    )
    torch.manual_seed(0)
    return transformers.LlamaModel(config).eval().to(torch.bfloat16)


def build_port(reference):
    return llama.port(reference, bug=llama.Bug.BUG).to(torch.bfloat16)


def build_inputs():
    input_ids = torch.randint(0, 99, (2, 64), generator=torch.Generator().manual_seed(0))
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
"""


@pytest.mark.parametrize(
    ("bug", "wrong"), [("NONE", None), ("ATTENTION_OUTPUT_HALVED", "LlamaModel.layers.0.self_attn")]
)
def test_without_the_float32_copy_replay_decides_when_compare_diverges(tmp_path, capsys, bug, wrong):
    script = tmp_path / "check_port.py"
    script.write_text(SCRIPT.replace("BUG", bug))
    output = tmp_path / "out"
    assert debug_port_main([str(script), "--output_dir", str(output), "--no_float32_noise"]) == (
        wrong is not None
    )
    assert not (output / "reference_float32").exists()
    printed = capsys.readouterr().out
    assert "rounding grows with depth" in printed  # compare alone: DIVERGED, correct port or not
    assert "replay: no module is wrong on the reference's own inputs" in printed or wrong in printed
    assert printed.rstrip().endswith("verdict: EQUIVALENT" if wrong is None else "verdict: NOT EQUIVALENT")
