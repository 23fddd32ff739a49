"""A hand-written port of Llama attention and RMSNorm, with the porting bugs the replay tests look for.

The attention calls two module-level helpers, ``apply_rotary_pos_emb`` and
``eager_attention_forward``, the way transformers models do, so the debugger's ``record_functions``
and replay find them by name in this module. The module-level switches select a bug:
``ROTATION`` "interleaved" rotates neighbouring pairs instead of the two halves (a classic RoPE
porting slip); ``MASK_OFFSET`` 1 lets each token see the next one.
"""

import torch
from torch import nn
from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRMSNorm

ROTATION = "halves"
MASK_OFFSET = 0


def _rotated(x: torch.Tensor) -> torch.Tensor:
    if ROTATION == "interleaved":
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.stack((-odd, even), dim=-1).flatten(-2)
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def apply_rotary_pos_emb(query, key, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return query * cos + _rotated(query) * sin, key * cos + _rotated(key) * sin


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    repeats = module.num_key_value_groups
    key, value = key.repeat_interleave(repeats, dim=1), value.repeat_interleave(repeats, dim=1)
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    query_length, key_length = scores.shape[-2:]
    allowed = torch.ones(query_length, key_length, dtype=torch.bool).tril(diagonal=MASK_OFFSET)
    scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


class PortAttention(LlamaAttention):
    def forward(
        self, hidden_states, position_embeddings=None, attention_mask=None, past_key_values=None, **kwargs
    ):
        batch, length, _ = hidden_states.shape

        def heads(states):
            return states.view(batch, length, -1, self.head_dim).transpose(1, 2)

        query = heads(self.q_proj(hidden_states))
        key, value = heads(self.k_proj(hidden_states)), heads(self.v_proj(hidden_states))
        query, key = apply_rotary_pos_emb(query, key, *position_embeddings)
        output, weights = eager_attention_forward(
            self, query, key, value, attention_mask, scaling=self.scaling
        )
        return self.o_proj(output.reshape(batch, length, -1)), weights


class LowPrecisionRMSNorm(LlamaRMSNorm):
    """RMSNorm computed in the input's dtype (the reference upcasts to float32): only noisier in bf16."""

    def forward(self, hidden_states):
        scale = torch.rsqrt(hidden_states.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * (hidden_states * scale)


class GeluMLPActivation(nn.Module):
    """A wrong activation (GELU where the model uses SiLU), for a port wrong in a single place."""

    def forward(self, x):
        return nn.functional.gelu(x)


def port_attention(model: nn.Module) -> nn.Module:
    for layer in model.model.layers:
        layer.self_attn.__class__ = PortAttention
    return model


def low_precision_norms(model: nn.Module) -> nn.Module:
    for module in model.modules():
        if type(module) is LlamaRMSNorm:
            module.__class__ = LowPrecisionRMSNorm
    return model
