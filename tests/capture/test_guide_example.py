"""The first example of docs/capture.md runs as written, given the layers it leaves to the reader.

It used to declare ``cross_attentions`` and return ``BaseModelOutputWithPast``, which has no such
field: the first capturing call raised ``KeyError``."""

import re
from pathlib import Path
from types import SimpleNamespace

import torch
from torch import nn

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "capture.md"


class MyAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x, **kwargs):
        weights = torch.softmax(x @ x.transpose(-1, -2), dim=-1)
        return self.proj(weights @ x), weights


class MyDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = MyAttention(config)
        self.crossattention = MyAttention(config)

    def forward(self, x, **kwargs):
        x = x + self.self_attn(x)[0]
        return x + self.crossattention(x)[0]


def test_the_first_example_of_the_capture_guide_runs():
    example = re.search(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S).group(1)
    config = SimpleNamespace(vocab_size=50, hidden_size=16, num_hidden_layers=3, use_cache=False)
    names = {
        "__name__": "guide_example",
        "MyAttention": MyAttention,
        "MyDecoderLayer": MyDecoderLayer,
        "config": config,
        "input_ids": torch.randint(0, 50, (1, 5)),
    }
    exec(compile(example, str(GUIDE), "exec"), names)
    assert len(names["out"].hidden_states) == config.num_hidden_layers + 1
    assert [len(names[field]) for field in ("hidden_states", "attentions", "cross_attentions")] == [4, 3, 3]
    assert names["out"].attentions[0].shape == (1, 5, 5)
