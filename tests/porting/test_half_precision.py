"""debug_port in bfloat16: rounding grows through the layers of a correct port until it crosses
any fixed tolerance, so when compare finds calls that differ, replay's bisection decides."""

import pytest
import torch

from model_debugging import debug_port
from tests.ports import llama

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("bug", "wrong"), [("NONE", None), ("ATTENTION_OUTPUT_HALVED", "LlamaModel.layers.0.self_attn")]
)
def test_a_deeper_bfloat16_port_is_judged_by_replay_when_compare_diverges(tmp_path, capsys, bug, wrong):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        vocab_size=99, hidden_size=64, intermediate_size=128, num_hidden_layers=8, num_attention_heads=8,
        num_key_value_heads=8, max_position_embeddings=128,
    )  # fmt: skip
    torch.manual_seed(0)
    reference = transformers.LlamaModel(config).eval()
    port = llama.port(reference, bug=llama.Bug[bug]).to(torch.bfloat16)
    input_ids = torch.randint(0, 99, (2, 64), generator=torch.Generator().manual_seed(0))
    inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
    result = debug_port(reference.to(torch.bfloat16), port, inputs, output_dir=tmp_path)
    assert not result.comparison.calls_agree  # compare alone: DIVERGED, correct port or not
    assert result.equivalent is (wrong is None)
    found = result.replay.smallest_wrong
    assert (found and found.module_path) == wrong
    printed = capsys.readouterr().out
    assert "replay: no module is wrong on the reference's own inputs" in printed or wrong in printed
    assert printed.rstrip().endswith("verdict: EQUIVALENT" if wrong is None else "verdict: NOT EQUIVALENT")
