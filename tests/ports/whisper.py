"""An encoder-decoder with a conv front-end: transformers' WhisperForConditionalGeneration, and a port
written as a porter writes a first version: ``conv_a``/``conv_b`` and ``F.gelu``, the positions as
parameters added in the model's forward, fused ``qkv`` (self-attention) and ``kv`` (cross-attention)
projections, its own causal mask, blocks ``enc.N``/``dec.N`` directly under the model (no encoder or
decoder module) called ``Block(x)`` and ``Block(y, memory)``, and the LM head tied to the token
embedding applied as ``y @ tok.weight.T`` (no call of its own: the traces cannot compare the final
outputs, ``debug_port`` compares what the models return).
"""

from __future__ import annotations

import enum

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

CONFIG = dict(
    vocab_size=99, num_mel_bins=8, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
    decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_source_positions=10,
    max_target_positions=16, pad_token_id=1, bos_token_id=2, eos_token_id=3, decoder_start_token_id=2,
)  # fmt: skip
STYLES = (Style.PLAIN,)
HEADS = CONFIG["encoder_attention_heads"]


class Bug(str, enum.Enum):
    NONE = "none"
    NO_CAUSAL_MASK = "the decoder's self-attention forgets the causal mask"
    CROSS_ATTENTION_UNSCALED = "the cross-attention scores not scaled by 1/sqrt(head_dim)"
    ENCODER_NORM_SKIPPED = "the encoder's final layer norm never applied (its weights are loaded)"


def reference():
    """A tiny WhisperForConditionalGeneration with random parameters (eager attention)."""
    import transformers

    config = transformers.WhisperConfig(**CONFIG, attn_implementation="eager")
    torch.manual_seed(0)
    return randomize(transformers.WhisperForConditionalGeneration(config))


def inputs(batch: int = 2, target: int = 6) -> dict:
    """``input_features`` (two frames per encoder position) and ``decoder_input_ids``."""
    generator = torch.Generator().manual_seed(1)
    frames = 2 * CONFIG["max_source_positions"]
    return {
        "input_features": torch.randn(batch, CONFIG["num_mel_bins"], frames, generator=generator),
        "decoder_input_ids": torch.randint(4, CONFIG["vocab_size"], (batch, target), generator=generator),
    }


def final_output(model: nn.Module, inputs: dict) -> torch.Tensor:
    output = model(**inputs)
    return output if isinstance(output, torch.Tensor) else output.logits


def _attend(q, k, v, causal: bool = False, scaled: bool = True):
    batch, tokens, size = q.shape
    q, k, v = (x.view(batch, -1, HEADS, size // HEADS).transpose(1, 2) for x in (q, k, v))
    scores = q @ k.transpose(-1, -2) * ((size // HEADS) ** -0.5 if scaled else 1.0)
    if causal:
        scores = scores.masked_fill(torch.ones(tokens, tokens, dtype=torch.bool).triu(1), float("-inf"))
    return (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, tokens, size)


class SelfAttention(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.qkv, self.out = nn.Linear(size, 3 * size), nn.Linear(size, size)

    def forward(self, x, causal: bool):
        return self.out(_attend(*self.qkv(x).chunk(3, dim=-1), causal=causal))


class CrossAttention(nn.Module):
    def __init__(self, size: int, bug: Bug):
        super().__init__()
        self.q, self.kv, self.out = nn.Linear(size, size), nn.Linear(size, 2 * size), nn.Linear(size, size)
        self.bug = bug

    def forward(self, x, memory):
        k, v = self.kv(memory).chunk(2, dim=-1)
        return self.out(_attend(self.q(x), k, v, scaled=self.bug is not Bug.CROSS_ATTENTION_UNSCALED))


class EncoderBlock(nn.Module):
    def __init__(self, size: int, hidden: int):
        super().__init__()
        self.ln_attn, self.attn = nn.LayerNorm(size), SelfAttention(size)
        self.ln_mlp, self.up, self.down = nn.LayerNorm(size), nn.Linear(size, hidden), nn.Linear(hidden, size)

    def forward(self, x):
        x = x + self.attn(self.ln_attn(x), False)
        return x + self.down(F.gelu(self.up(self.ln_mlp(x))))


class DecoderBlock(EncoderBlock):
    def __init__(self, size: int, hidden: int, bug: Bug):
        super().__init__(size, hidden)
        self.ln_cross, self.cross = nn.LayerNorm(size), CrossAttention(size, bug)
        self.bug = bug

    def forward(self, y, memory):
        y = y + self.attn(self.ln_attn(y), self.bug is not Bug.NO_CAUSAL_MASK)
        y = y + self.cross(self.ln_cross(y), memory)
        return y + self.down(F.gelu(self.up(self.ln_mlp(y))))


class Whisper(nn.Module):
    def __init__(self, bug: Bug):
        super().__init__()
        size, hidden = CONFIG["d_model"], CONFIG["encoder_ffn_dim"]
        self.conv_a = nn.Conv1d(CONFIG["num_mel_bins"], size, 3, padding=1)
        self.conv_b = nn.Conv1d(size, size, 3, stride=2, padding=1)
        self.audio_pos = nn.Parameter(torch.zeros(CONFIG["max_source_positions"], size))
        self.enc = nn.ModuleList(EncoderBlock(size, hidden) for _ in range(CONFIG["encoder_layers"]))
        self.enc_ln = nn.LayerNorm(size)
        self.tok = nn.Embedding(CONFIG["vocab_size"], size)
        self.text_pos = nn.Parameter(torch.zeros(CONFIG["max_target_positions"], size))
        self.dec = nn.ModuleList(DecoderBlock(size, hidden, bug) for _ in range(CONFIG["decoder_layers"]))
        self.dec_ln = nn.LayerNorm(size)
        self.bug = bug

    def forward(self, input_features, decoder_input_ids):
        x = F.gelu(self.conv_b(F.gelu(self.conv_a(input_features)))).transpose(1, 2) + self.audio_pos
        for block in self.enc:
            x = block(x)
        memory = x if self.bug is Bug.ENCODER_NORM_SKIPPED else self.enc_ln(x)
        y = self.tok(decoder_input_ids) + self.text_pos[: decoder_input_ids.shape[1]]
        for block in self.dec:
            y = block(y, memory)
        return self.dec_ln(y) @ self.tok.weight.T


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> nn.Module:
    """The port with the reference's weights, by a conversion map (k has no bias: zeros in the fused one)."""
    state, zeros = reference.state_dict(), torch.zeros(CONFIG["d_model"])
    encoder, decoder = "model.encoder.", "model.decoder."
    converted = {"conv_a": encoder + "conv1", "conv_b": encoder + "conv2", "enc_ln": encoder + "layer_norm"}
    converted["dec_ln"] = decoder + "layer_norm"
    weights = {
        "audio_pos": state[encoder + "embed_positions.weight"],
        "tok.weight": state[decoder + "embed_tokens.weight"],
        "text_pos": state[decoder + "embed_positions.weight"],
    }
    for side, ours in (("encoder", "enc"), ("decoder", "dec")):
        for number in range(CONFIG[f"{side}_layers"]):
            theirs, mine = f"model.{side}.layers.{number}.", f"{ours}.{number}."
            attention = theirs + "self_attn."
            weights[mine + "attn.qkv.weight"] = torch.cat(
                [state[f"{attention}{x}_proj.weight"] for x in "qkv"]
            )
            biases = [state[attention + "q_proj.bias"], zeros, state[attention + "v_proj.bias"]]
            weights[mine + "attn.qkv.bias"] = torch.cat(biases)
            converted |= {
                mine + "attn.out": attention + "out_proj",
                mine + "ln_attn": theirs + "self_attn_layer_norm",
                mine + "ln_mlp": theirs + "final_layer_norm",
                mine + "up": theirs + "fc1",
                mine + "down": theirs + "fc2",
            }
            if side == "decoder":
                cross = theirs + "encoder_attn."
                weights[mine + "cross.kv.weight"] = torch.cat(
                    [state[cross + "k_proj.weight"], state[cross + "v_proj.weight"]]
                )
                weights[mine + "cross.kv.bias"] = torch.cat([zeros, state[cross + "v_proj.bias"]])
                converted |= {
                    mine + "cross.q": cross + "q_proj",
                    mine + "cross.out": cross + "out_proj",
                    mine + "ln_cross": theirs + "encoder_attn_layer_norm",
                }
    for mine, theirs in converted.items():
        for kind in ("weight", "bias"):
            weights[f"{mine}.{kind}"] = state[f"{theirs}.{kind}"]
    model = Whisper(bug)
    model.load_state_dict(weights)
    return model.eval()
