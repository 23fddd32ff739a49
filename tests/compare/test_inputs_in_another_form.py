"""Inputs a port passes in another form than its reference: a padding mask where the reference
passes a 4-D mask, rotary tables of another shape. A correct port is equivalent, and a bug inside
is still found where it is."""

import math

import pytest
import torch
from torch import nn

from model_debugging import compare_traces, debug_port


def _causal_mask(padding: torch.Tensor) -> torch.Tensor:
    """The 4-D boolean mask (True: attend) a transformers model builds from a padding mask."""
    tokens = padding.shape[1]
    causal = torch.ones(tokens, tokens, dtype=torch.bool).tril()
    return causal[None, None] & padding.bool()[:, None, None, :]


def _layer_trace(writer, mask_name, mask, output):
    x = torch.ones(2, 4, 3)
    inside = writer.node("Toy.layer.proj", {"args": [x]}, output)
    layer = writer.node("Toy.layer", {"args": [x], "kwargs": {mask_name: mask}}, children=[inside])
    return writer.write(writer.node("Toy", {"args": [x]}, output, children=[layer]))


@pytest.mark.parametrize("batch", [2, 4])  # 4: as many sequences as tokens
def test_a_padding_mask_agrees_with_the_causal_4d_mask_made_from_it(tmp_path, trace_writer, batch):
    padding = torch.ones(batch, 4, dtype=torch.bool)  # the test's traces keep no statistics of integers
    padding[1, 3:] = False
    y = torch.ones(2, 4, 3)
    _layer_trace(trace_writer(tmp_path / "a"), "attention_mask", _causal_mask(padding), y)
    _layer_trace(trace_writer(tmp_path / "b"), "attention_mask", padding, y)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.equivalent
    (mask,) = [value for value in result.modules[1].values if value.reference == "kwargs.attention_mask"]
    assert (mask.form, mask.status) == ("mask", "equal")

    wrong = padding.clone()
    wrong[0, 0] = False  # pads a token the reference lets through
    _layer_trace(trace_writer(tmp_path / "c"), "attention_mask", wrong, y)
    result = compare_traces(tmp_path / "a", tmp_path / "c")
    assert result.first_input_divergence.module_path == "Toy.layer"
    assert "inputs.kwargs.attention_mask differs" in result.first_input_divergence.details


def test_an_input_in_another_form_that_changes_nothing_is_a_note(tmp_path, trace_writer):
    y = torch.ones(2, 4, 3)
    _layer_trace(trace_writer(tmp_path / "a"), "cos", torch.ones(8, 4), y)
    _layer_trace(trace_writer(tmp_path / "b"), "cos", torch.ones(1, 8, 2, 2), y)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.equivalent and result.first_input_divergence is None
    assert result.modules[1].notes == (
        "inputs.kwargs.cos: shape [8, 4] vs [1, 8, 2, 2]; not counted: nothing computed in this call differs",
    )

    _layer_trace(
        trace_writer(tmp_path / "c"), "cos", torch.ones(1, 8, 2, 2), y * 2
    )  # and a call inside differs
    result = compare_traces(tmp_path / "a", tmp_path / "c")
    assert not result.equivalent
    assert result.first_input_divergence.module_path == "Toy.layer"


def test_values_that_differ_stay_counted_when_the_outputs_agree(tmp_path, trace_writer):
    """A difference below tolerance after a call is still a difference before it."""
    y = torch.ones(2, 4, 3)
    _layer_trace(trace_writer(tmp_path / "a"), "cos", torch.ones(8, 4), y)
    _layer_trace(trace_writer(tmp_path / "b"), "cos", torch.ones(8, 4) * 1.01, y)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert not result.equivalent
    assert result.first_input_divergence.module_path == "Toy.layer"


# ---- a DistilBERT port written by hand, as a porter would -----------------------------------------


class _Attention(nn.Module):
    def __init__(self, width, heads, scaled=True):
        super().__init__()
        self.heads, self.scaled = heads, scaled
        self.q, self.k, self.v, self.o = (nn.Linear(width, width) for _ in range(4))

    def forward(self, x, mask):
        batch, tokens, width = x.shape

        def split(y):
            return y.view(batch, tokens, self.heads, -1).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        if self.scaled:
            q = q / math.sqrt(width // self.heads)
        weights = (q @ k.transpose(-1, -2)).masked_fill(mask[:, None, None, :] == 0, torch.finfo(q.dtype).min)
        return self.o((weights.softmax(-1) @ v).transpose(1, 2).reshape(batch, tokens, width))


class _Block(nn.Module):
    def __init__(self, config, scaled):
        super().__init__()
        self.attn = _Attention(config.dim, config.n_heads, scaled)
        self.norm1 = nn.LayerNorm(config.dim, eps=1e-12)
        self.fc1, self.fc2 = (
            nn.Linear(config.dim, config.hidden_dim),
            nn.Linear(config.hidden_dim, config.dim),
        )
        self.norm2 = nn.LayerNorm(config.dim, eps=1e-12)

    def forward(self, x, mask):
        x = self.norm1(x + self.attn(x, mask))
        return self.norm2(x + self.fc2(nn.functional.gelu(self.fc1(x))))


class _Port(nn.Module):
    def __init__(self, config, scaled=True):
        super().__init__()
        self.tok = nn.Embedding(config.vocab_size, config.dim)
        self.pos = nn.Embedding(config.max_position_embeddings, config.dim)
        self.norm = nn.LayerNorm(config.dim, eps=1e-12)
        self.blocks = nn.ModuleList(_Block(config, scaled) for _ in range(config.n_layers))

    def forward(self, input_ids, attention_mask):
        x = self.norm(self.tok(input_ids) + self.pos(torch.arange(input_ids.shape[1])))
        for block in self.blocks:
            x = block(x, attention_mask)
        return x


def _load(port, reference):
    names = {
        "tok": "embeddings.word_embeddings",
        "pos": "embeddings.position_embeddings",
        "norm": "embeddings.LayerNorm",
    }
    inner = {"attn.q": "attention.q_lin", "attn.k": "attention.k_lin", "attn.v": "attention.v_lin"}
    inner |= {"attn.o": "attention.out_lin", "norm1": "sa_layer_norm", "norm2": "output_layer_norm"}
    inner |= {"fc1": "ffn.lin1", "fc2": "ffn.lin2"}
    for index in range(len(port.blocks)):
        names |= {
            f"blocks.{index}.{ours}": f"transformer.layer.{index}.{theirs}" for ours, theirs in inner.items()
        }
    weights = reference.state_dict()
    port.load_state_dict(
        {
            name: weights[name.replace(ours, theirs, 1)]
            for name in port.state_dict()
            for ours, theirs in names.items()
            if name.rpartition(".")[0] == ours
        }
    )


@pytest.mark.integration
@pytest.mark.parametrize(
    ("scaled", "origin"), [(True, None), (False, "DistilBertModel.transformer.layer.0.attention")]
)
def test_a_hand_written_port_with_padding_is_judged_by_what_it_computes(tmp_path, scaled, origin):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.DistilBertConfig(
        vocab_size=99, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64
    )
    reference = transformers.DistilBertModel(config).eval()
    port = _Port(config, scaled).eval()
    _load(port, reference)
    input_ids = torch.randint(0, 99, (2, 10))
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, 7:] = 0
    result = debug_port(
        reference, port, {"input_ids": input_ids, "attention_mask": attention_mask}, output_dir=tmp_path
    )
    assert result.equivalent is (origin is None)
    found = result.comparison.divergence_origin
    assert (found and found.module_path) == origin
    # the port's position embedding, at its top and given arange(10), pairs with the reference's,
    # inside its embeddings and given position ids [1, 10]; what is left is GELU, a module on one side only
    assert result.comparison.unmatched_candidate == ()
    assert all(call.endswith("ffn.activation") for call in result.comparison.unmatched_reference)
