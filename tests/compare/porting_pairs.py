"""Real porting pairs for compare: a transformers model and a second implementation with converted
weights, both from tiny random configs (no download), traced on the same input.

- Llama -> Mistral: identical module trees and weight names.
- Llama -> Phi-3: fused ``qkv_proj`` and ``gate_up_proj``, dropouts in every decoder layer.
- GPT-2 (transformers, Conv1D with fused ``c_attn`` and ``[in, out]`` weights) -> ``TinyGpt`` below:
  other names, no ``transformer`` wrapper, separate query/key/value projections, ``nn.Linear``.

Each ``convert_*`` takes the porting bugs to inject, so a test can check that compare names the
module the bug is in.
"""

from __future__ import annotations

import enum
import math
from pathlib import Path

import torch
from torch import nn

from model_debugging import model_addition_debugger_context

TOKENS = 8


class Bug(str, enum.Enum):
    NONE = "none"
    ROPE_BASE = "wrong RoPE base"
    NORM_EPSILON = "wrong norm epsilon"
    MISSING_RESIDUAL = "missing residual"
    TRANSPOSED_WEIGHT = "transposed weight"
    SWAPPED_FUSED_HALVES = "swapped fused halves"


def trace(model: nn.Module, directory: Path, input_ids: torch.Tensor, *, use_repr: bool = False) -> Path:
    with model_addition_debugger_context(
        model, debug_path=str(directory), do_prune_layers=False, use_repr=use_repr
    ):
        model(input_ids)
    return directory


def input_ids(vocab_size: int = 100, tokens: int = TOKENS) -> torch.Tensor:
    return torch.randint(0, vocab_size, (1, tokens), generator=torch.Generator().manual_seed(0))


_LLAMA_SHAPE = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
    vocab_size=100, rms_norm_eps=1e-6, bos_token_id=None, eos_token_id=None, pad_token_id=None,
)  # fmt: skip


def llama(**shape):
    """A Llama from a tiny random config; ``shape`` overrides config values (the benchmark's 32 layers)."""
    import transformers

    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**{**_LLAMA_SHAPE, **shape})).eval()


def _without_attention_residual(layer_class: type) -> type:
    """A decoder layer class that forgets the residual around self-attention (a porting bug)."""

    class NoAttentionResidual(layer_class):
        def forward(
            self, hidden_states, attention_mask=None, position_ids=None, position_embeddings=None, **kwargs
        ):
            hidden_states, _ = self.self_attn(
                hidden_states=self.input_layernorm(hidden_states),
                attention_mask=attention_mask,
                position_ids=position_ids,
                position_embeddings=position_embeddings,
                **kwargs,
            )
            return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))

    return NoAttentionResidual


def _settings(reference: nn.Module, bug: Bug) -> dict:
    shape = {key: getattr(reference.config, key) for key in _LLAMA_SHAPE}
    if bug is Bug.ROPE_BASE:
        shape["rope_parameters"] = {"rope_type": "default", "rope_theta": 1000.0}
    if bug is Bug.NORM_EPSILON:
        shape["rms_norm_eps"] = 1e-5
    return shape


def _load_with_bug(port: nn.Module, weights: dict, bug: Bug) -> nn.Module:
    """Load the converted ``weights`` into ``port``, with the weight or residual bug injected in layer 1."""
    if bug is Bug.TRANSPOSED_WEIGHT:
        weights["model.layers.1.self_attn.o_proj.weight"] = weights[
            "model.layers.1.self_attn.o_proj.weight"
        ].T
    port.load_state_dict(weights)
    if bug is Bug.MISSING_RESIDUAL:
        layer = port.model.layers[1]
        layer.__class__ = _without_attention_residual(type(layer))
    return port


def convert_llama_to_mistral(reference: nn.Module, bug: Bug = Bug.NONE) -> nn.Module:
    import transformers

    port = transformers.MistralForCausalLM(transformers.MistralConfig(**_settings(reference, bug))).eval()
    return _load_with_bug(port, dict(reference.state_dict()), bug)


def convert_llama_to_phi3(reference: nn.Module, bug: Bug = Bug.NONE) -> nn.Module:
    import transformers

    port = transformers.Phi3ForCausalLM(transformers.Phi3Config(**_settings(reference, bug))).eval()
    state = reference.state_dict()
    weights = {}
    for name, tensor in state.items():
        if ".self_attn.q_proj." in name:
            prefix = name.removesuffix("q_proj.weight")
            parts = [state[f"{prefix}{part}_proj.weight"] for part in "qkv"]
            weights[f"{prefix}qkv_proj.weight"] = torch.cat(parts)
        elif ".mlp.gate_proj." in name:
            prefix = name.removesuffix("gate_proj.weight")
            gate, up = tensor, state[f"{prefix}up_proj.weight"]
            swapped = bug is Bug.SWAPPED_FUSED_HALVES and prefix.startswith("model.layers.1.")
            weights[f"{prefix}gate_up_proj.weight"] = torch.cat([up, gate] if swapped else [gate, up])
        elif not any(f".{part}_proj." in name for part in ("k", "v", "up")):
            weights[name] = tensor
    return _load_with_bug(port, weights, bug)


def gpt2():
    import transformers

    config = transformers.GPT2Config(
        n_embd=32, n_layer=2, n_head=4, n_positions=32, vocab_size=100, attn_implementation="eager",
        bos_token_id=None, eos_token_id=None,
    )  # fmt: skip
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(config).eval()


class TinyAttention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value, self.output = (nn.Linear(width, width) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        q, k, v = (
            projection(x).view(batch, tokens, self.heads, -1).transpose(1, 2)
            for projection in (self.query, self.key, self.value)
        )
        scores = q @ k.transpose(-1, -2) / math.sqrt(width // self.heads)
        causal = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
        mixed = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
        return self.output(mixed.transpose(1, 2).reshape(batch, tokens, width))


class TinyFeedForward(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.expand, self.gelu, self.contract = (
            nn.Linear(width, 4 * width),
            nn.GELU("tanh"),
            nn.Linear(4 * width, width),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.contract(self.gelu(self.expand(x)))


class TinyBlock(nn.Module):
    def __init__(self, width: int, heads: int, epsilon: float, attention_residual: bool = True):
        super().__init__()
        self.attention_norm, self.attention = nn.LayerNorm(width, eps=epsilon), TinyAttention(width, heads)
        self.ffn_norm, self.ffn = nn.LayerNorm(width, eps=epsilon), TinyFeedForward(width)
        self.attention_residual = attention_residual

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attended = self.attention(self.attention_norm(x))
        x = x + attended if self.attention_residual else attended
        return x + self.ffn(self.ffn_norm(x))


class TinyGpt(nn.Module):
    def __init__(self, vocab: int, positions: int, width: int, layers: int, heads: int, epsilon: float):
        super().__init__()
        self.token_embedding, self.position_embedding = (
            nn.Embedding(vocab, width),
            nn.Embedding(positions, width),
        )
        self.blocks = nn.ModuleList(TinyBlock(width, heads, epsilon) for _ in range(layers))
        self.final_norm, self.lm_head = nn.LayerNorm(width, eps=epsilon), nn.Linear(width, vocab, bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1])[None]
        x = self.token_embedding(input_ids) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))


def convert_gpt2_to_tiny(reference: nn.Module, bug: Bug = Bug.NONE) -> TinyGpt:
    config = reference.config
    epsilon = 1e-6 if bug is Bug.NORM_EPSILON else config.layer_norm_epsilon
    port = TinyGpt(
        config.vocab_size, config.n_positions, config.n_embd, config.n_layer, config.n_head, epsilon
    )
    source = reference.state_dict()
    weights = {
        "token_embedding.weight": source["transformer.wte.weight"],
        "position_embedding.weight": source["transformer.wpe.weight"],
        "final_norm.weight": source["transformer.ln_f.weight"],
        "final_norm.bias": source["transformer.ln_f.bias"],
        "lm_head.weight": source["lm_head.weight"],
    }
    for layer in range(config.n_layer):
        theirs, ours = f"transformer.h.{layer}.", f"blocks.{layer}."
        for norm, target in (("ln_1", "attention_norm"), ("ln_2", "ffn_norm")):
            for kind in ("weight", "bias"):
                weights[f"{ours}{target}.{kind}"] = source[f"{theirs}{norm}.{kind}"]
        # Conv1D keeps [in, out] weights: nn.Linear wants them transposed
        query, key, value = source[f"{theirs}attn.c_attn.weight"].T.chunk(3)
        query_bias, key_bias, value_bias = source[f"{theirs}attn.c_attn.bias"].chunk(3)
        if bug is Bug.SWAPPED_FUSED_HALVES and layer == 1:
            query, key, query_bias, key_bias = key, query, key_bias, query_bias
        for name, weight, bias in (
            ("query", query, query_bias),
            ("key", key, key_bias),
            ("value", value, value_bias),
        ):
            weights[f"{ours}attention.{name}.weight"], weights[f"{ours}attention.{name}.bias"] = weight, bias
        output = source[f"{theirs}attn.c_proj.weight"]
        transposed = bug is Bug.TRANSPOSED_WEIGHT and layer == 1
        weights[f"{ours}attention.output.weight"] = output if transposed else output.T
        weights[f"{ours}attention.output.bias"] = source[f"{theirs}attn.c_proj.bias"]
        for conv, linear in (("c_fc", "expand"), ("c_proj", "contract")):
            weights[f"{ours}ffn.{linear}.weight"] = source[f"{theirs}mlp.{conv}.weight"].T
            weights[f"{ours}ffn.{linear}.bias"] = source[f"{theirs}mlp.{conv}.bias"]
    port.load_state_dict(weights)
    if bug is Bug.MISSING_RESIDUAL:
        port.blocks[1].attention_residual = False
    return port.eval()
