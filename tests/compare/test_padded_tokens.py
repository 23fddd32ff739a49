"""Left padding: a causal model's padded tokens attend to nothing, and two correct implementations
fill them in differently. Differences only there are notes; a difference at a real token counts."""

import math

import pytest
import torch
from torch import nn

from model_debugging import compare_traces, debug_port, model_addition_debugger_context, replay_trace


def _trace(writer, output):
    mask = torch.ones(2, 4, dtype=torch.long)
    mask[1, :2] = 0  # the second sequence is padded on the left
    x = torch.ones(2, 4, 3)
    layer = writer.node("Toy.layer", {"args": [x]}, output)
    return writer.write(
        writer.node("Toy", {"args": [x], "kwargs": {"attention_mask": mask}}, children=[layer])
    )


@pytest.mark.parametrize(("token", "counted"), [(1, False), (2, True)])
def test_differences_at_padded_tokens_only_are_notes(tmp_path, trace_writer, token, counted):
    y = torch.ones(2, 4, 3)
    _trace(trace_writer(tmp_path / "a"), y)
    changed = y.clone()
    changed[1, token] = float("nan")  # token 1 is padding, token 2 is not
    _trace(trace_writer(tmp_path / "b"), changed)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.equivalent is not counted
    (output,) = [value for value in result.modules[1].values if value.place == "outputs"]
    assert output.counted is counted
    if not counted:
        assert output.note == "differs only at tokens the model's attention_mask pads: not counted"

    summaries = [trace_writer(tmp_path / f"{side}-summary", use_repr=True) for side in "ab"]
    _trace(summaries[0], y)
    _trace(summaries[1], changed)  # statistics cannot say where a difference is
    assert not compare_traces(tmp_path / "a-summary", tmp_path / "b-summary").equivalent


class _Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x, attention_mask):
        return self.proj(x) * attention_mask[..., None]


@pytest.mark.parametrize(
    ("padded", "diverged", "warned"),
    [(0, True, True), (0, False, False), (3, True, False), (None, True, False)],
)
def test_summary_traces_of_left_padded_inputs_that_diverge_say_what_statistics_cannot_tell(
    tmp_path, padded, diverged, warned
):
    torch.manual_seed(0)
    model, x = _Masked().eval(), torch.randn(2, 4, 3)
    mask = torch.ones(2, 4, dtype=torch.long)
    if padded is not None:
        mask[1, padded] = 0  # token 0: padded on the left; token 3: on the right
    for side in "ab":
        with model_addition_debugger_context(model, debug_path=tmp_path / side, use_repr=True):
            model(x, attention_mask=mask)
        if diverged:
            model.proj.bias.data += 1.0
    warnings = compare_traces(tmp_path / "a", tmp_path / "b").warnings
    assert (
        any("the model's attention_mask pads tokens on the left" in warning for warning in warnings) is warned
    )


# ---- a Llama port written by hand in plain PyTorch, as a porter would -------------------------------


class _Norm(nn.Module):
    def __init__(self, width, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(width)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def _rotated(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin


class _Attention(nn.Module):
    def __init__(self, config, scale):
        super().__init__()
        width, self.heads, self.scale = config.hidden_size, config.num_attention_heads, scale
        self.q, self.k, self.v, self.o = (nn.Linear(width, width, bias=False) for _ in range(4))

    def forward(self, x, cos, sin, mask):
        batch, tokens, width = x.shape

        def split(y):
            return y.view(batch, tokens, self.heads, -1).transpose(1, 2)

        q, k, v = _rotated(split(self.q(x)), cos, sin), _rotated(split(self.k(x)), cos, sin), split(self.v(x))
        allowed = torch.ones(tokens, tokens, dtype=torch.bool).tril() & mask.bool()[:, None, None, :]
        weights = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(
            ~allowed, torch.finfo(q.dtype).min
        )
        return self.o((weights.softmax(-1) @ v).transpose(1, 2).reshape(batch, tokens, width)) * self.scale


class _Block(nn.Module):
    def __init__(self, config, scale):
        super().__init__()
        self.norm1, self.norm2 = (
            _Norm(config.hidden_size, config.rms_norm_eps),
            _Norm(config.hidden_size, config.rms_norm_eps),
        )
        self.attn = _Attention(config, scale)
        width, inner = config.hidden_size, config.intermediate_size
        self.gate, self.up, self.down = (
            nn.Linear(width, inner, bias=False),
            nn.Linear(width, inner, bias=False),
            nn.Linear(inner, width, bias=False),
        )

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.norm1(x), cos, sin, mask)
        normed = self.norm2(x)
        return x + self.down(nn.functional.silu(self.gate(normed)) * self.up(normed))


class _Port(nn.Module):
    def __init__(self, config, scale):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.blocks = nn.ModuleList(_Block(config, scale) for _ in range(config.num_hidden_layers))
        self.norm = _Norm(config.hidden_size, config.rms_norm_eps)

    def forward(self, input_ids, attention_mask):
        head = self.config.hidden_size // self.config.num_attention_heads
        positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        inverse = 1.0 / (
            self.config.rope_parameters["rope_theta"] ** (torch.arange(0, head, 2).float() / head)
        )
        angles = positions[..., None].float() * inverse
        angles = torch.cat((angles, angles), -1)[:, None]
        x = self.embed(input_ids)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        for block in self.blocks:
            x = block(x, cos, sin, attention_mask)
        return self.norm(x)


_NAMES = {"norm1": "input_layernorm", "norm2": "post_attention_layernorm", "attn.q": "self_attn.q_proj"}
_NAMES |= {"attn.k": "self_attn.k_proj", "attn.v": "self_attn.v_proj", "attn.o": "self_attn.o_proj"}
_NAMES |= {"gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}


def _reference_name(name):
    if name.startswith("blocks."):
        _, index, rest = name.split(".", 2)
        module, _, parameter = rest.rpartition(".")
        return f"layers.{index}.{_NAMES[module]}.{parameter}"
    return {"embed.weight": "embed_tokens.weight", "norm.weight": "norm.weight"}[name]


def _llama_and_port(dtype, scale=1.0):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=99,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
    )
    reference = transformers.LlamaModel(config).eval()
    port = _Port(config, scale).eval()
    weights = reference.state_dict()
    port.load_state_dict({name: weights[_reference_name(name)] for name in port.state_dict()})
    input_ids = torch.randint(0, 99, (2, 10))
    return (
        reference.to(dtype),
        port.to(dtype),
        {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)},
    )


@pytest.mark.integration
@pytest.mark.parametrize(("scale", "origin"), [(1.0, None), (0.5, "LlamaModel.layers.0.self_attn")])
def test_a_hand_written_llama_port_with_left_padding_is_judged_at_real_tokens(tmp_path, scale, origin):
    reference, port, inputs = _llama_and_port(torch.float32, scale)
    inputs["attention_mask"][1, :3] = 0
    result = debug_port(reference, port, inputs, output_dir=tmp_path)
    assert result.equivalent is (origin is None)
    found = result.comparison.divergence_origin
    assert (found and found.module_path) == origin
    if origin is None:
        assert result.summary_line().startswith(
            "returned outputs: equal within tolerance at every real token"
        )
    # replay runs the port on the reference's recorded inputs and judges it the same way
    replayed = replay_trace(tmp_path / "reference", port, bisect=True, comparison=result.comparison)
    assert (replayed.bug_in is None) is (origin is None)


@pytest.mark.integration
@pytest.mark.parametrize(
    ("dtype", "scale", "origin"),
    [
        # no padding: transformers passes attention_mask=None, the port its mask of ones, and both
        # pass a [batch, tokens] integer tensor (position ids, the mask) that must not be paired
        (torch.float32, 1.0, None),
        (torch.float32, 0.5, "LlamaModel.layers.0.self_attn"),
        # bfloat16: the port's norms round differently from transformers' (computed in float32)
        (torch.bfloat16, 1.0, None),
        (torch.bfloat16, 0.5, "LlamaModel.layers.0.self_attn"),
    ],
)
def test_a_hand_written_llama_port_without_padding(tmp_path, dtype, scale, origin):
    reference, port, inputs = _llama_and_port(dtype, scale)
    result = debug_port(reference, port, inputs, output_dir=tmp_path, verbose=False)
    assert result.equivalent is (origin is None)
    found = result.comparison.divergence_origin
    assert (found and found.module_path) == origin
    basis = result.comparison.tolerance_basis
    assert (basis == "compare's defaults") is (dtype is torch.float32)
    rounding = any("rounding grows with depth" in warning for warning in result.comparison.warnings)
    assert rounding is (dtype is torch.bfloat16 and origin is not None)


@pytest.mark.integration
def test_a_bfloat16_port_whose_block_raises_is_named_where_it_raised(tmp_path, monkeypatch):
    reference, port, inputs = _llama_and_port(torch.bfloat16)
    forward = _Block.forward  # a porter's first bf16 run: the rotary tables left in float32
    monkeypatch.setattr(
        _Block, "forward", lambda self, x, cos, sin, mask: forward(self, x, cos.float(), sin.float(), mask)
    )
    result = debug_port(reference, port, inputs, output_dir=tmp_path, verbose=False)
    assert result.comparison.divergence_origin.module_path == "LlamaModel.layers.0.self_attn"
    assert "candidate raised RuntimeError" in result.comparison.divergence_origin.details[0]
    assert not any("rounding grows" in warning for warning in result.comparison.warnings)
