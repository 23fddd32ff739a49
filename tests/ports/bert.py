"""An encoder: transformers' BertForSequenceClassification, and a port of it in plain PyTorch.

The reference sums word, position and token-type embeddings under a ``LayerNorm`` module (eps
1e-12), has q/k/v ``Linear`` modules in ``attention.self``, the output projection and the norm
after the residual in ``attention.output``, a ``GELUActivation`` module, an additive float mask
(``finfo.min``) made once in the model's forward, and a pooler (``Linear`` + ``Tanh``).

:class:`Classifier` (``Style.PLAIN``, the only style) is written as a porter of the original BERT
code writes it in PyTorch: ``forward(input_ids, segment_ids, input_mask)`` with positional
arguments, its own names (``transformer.embed.tok_embed / pos_embed / seg_embed / norm``,
``transformer.blocks.N.attn.proj_q``, ``proj``, ``norm1``, ``pwff.fc1``, ``norm2``), a TF-style
``LayerNorm`` module with ``gamma``, ``beta`` and ``variance_epsilon``, a ``gelu`` function, the 0/1
padding mask turned into ``scores -= 10000 * (1 - mask)`` inside each attention, and a pooler
``fc`` + ``nn.Tanh`` in the classifier.
"""

from __future__ import annotations

import enum
import math

import torch
import torch.nn.functional as F
from torch import nn

from tests.ports import Style, randomize

CONFIG = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=100,
    max_position_embeddings=32, type_vocab_size=2, num_labels=3, layer_norm_eps=1e-12, pad_token_id=0,
)  # fmt: skip
STYLES = (Style.PLAIN,)


class Bug(str, enum.Enum):
    NONE = "none"
    LAYER_NORM_EPS = "every LayerNorm with eps 1e-5 (PyTorch's default) instead of BERT's 1e-12"
    NO_TOKEN_TYPES = "the segment (token type) embeddings are never added"
    MASK_ON_QUERIES = "the padding mask broadcast over the queries instead of the keys"


def reference():
    """A tiny BertForSequenceClassification with random parameters (eager attention), its embedding
    tables as small as BERT's (so that the norms' eps matters, as it does in BERT)."""
    import transformers

    config = transformers.BertConfig(**CONFIG, attn_implementation="eager")
    torch.manual_seed(0)
    model = randomize(transformers.BertForSequenceClassification(config))
    with torch.no_grad():
        embeddings = model.bert.embeddings
        for table in (
            embeddings.word_embeddings,
            embeddings.position_embeddings,
            embeddings.token_type_embeddings,
        ):
            table.weight.mul_(0.03)
    return model


def inputs(batch: int = 2, tokens: int = 8) -> dict:
    """``input_ids``, ``token_type_ids`` (a second segment in the second half) and an
    ``attention_mask`` padding the last three tokens of the second sequence."""
    input_ids = torch.randint(
        1, CONFIG["vocab_size"], (batch, tokens), generator=torch.Generator().manual_seed(1)
    )
    token_type_ids = torch.zeros(batch, tokens, dtype=torch.long)
    token_type_ids[:, tokens // 2 :] = 1
    attention_mask = torch.ones(batch, tokens, dtype=torch.long)
    attention_mask[1, -3:] = 0
    input_ids[1, -3:] = 0
    return {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": attention_mask}


def port_inputs(batch: int = 2, tokens: int = 8) -> tuple:
    """The same inputs as the port takes them: ``(input_ids, segment_ids, input_mask)``."""
    given = inputs(batch, tokens)
    return given["input_ids"], given["token_type_ids"], given["attention_mask"]


def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


class LayerNorm(nn.Module):
    def __init__(self, dim: int, variance_epsilon: float):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))
        self.beta = nn.Parameter(torch.zeros(dim))
        self.variance_epsilon = variance_epsilon

    def forward(self, x):
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        return self.gamma * ((x - u) / torch.sqrt(s + self.variance_epsilon)) + self.beta


class Embeddings(nn.Module):
    def __init__(self, config: dict, bug: Bug, eps: float):
        super().__init__()
        dim = config["hidden_size"]
        self.tok_embed = nn.Embedding(config["vocab_size"], dim)
        self.pos_embed = nn.Embedding(config["max_position_embeddings"], dim)
        self.seg_embed = nn.Embedding(config["type_vocab_size"], dim)
        self.norm = LayerNorm(dim, eps)
        self.drop = nn.Dropout(0.1)
        self.bug = bug

    def forward(self, x, seg):
        pos = torch.arange(x.size(1), dtype=torch.long, device=x.device).unsqueeze(0).expand_as(x)
        e = self.tok_embed(x) + self.pos_embed(pos)
        if self.bug is not Bug.NO_TOKEN_TYPES:
            e = e + self.seg_embed(seg)
        return self.drop(self.norm(e))


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, config: dict, bug: Bug):
        super().__init__()
        dim = config["hidden_size"]
        self.proj_q, self.proj_k, self.proj_v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)
        self.n_heads, self.bug = config["num_attention_heads"], bug

    def forward(self, x, mask):
        batch, length, dim = x.shape
        q, k, v = (
            p(x).view(batch, length, self.n_heads, -1).transpose(1, 2)
            for p in (self.proj_q, self.proj_k, self.proj_v)
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        if mask is not None:
            mask = (
                mask[:, None, :, None] if self.bug is Bug.MASK_ON_QUERIES else mask[:, None, None, :]
            ).float()
            scores -= 10000.0 * (1.0 - mask)
        scores = self.drop(F.softmax(scores, dim=-1))
        return (scores @ v).transpose(1, 2).contiguous().view(batch, length, dim)


class PositionWiseFeedForward(nn.Module):
    def __init__(self, config: dict):
        super().__init__()
        self.fc1 = nn.Linear(config["hidden_size"], config["intermediate_size"])
        self.fc2 = nn.Linear(config["intermediate_size"], config["hidden_size"])

    def forward(self, x):
        return self.fc2(gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, config: dict, bug: Bug, eps: float):
        super().__init__()
        dim = config["hidden_size"]
        self.attn = MultiHeadedSelfAttention(config, bug)
        self.proj = nn.Linear(dim, dim)
        self.norm1 = LayerNorm(dim, eps)
        self.pwff = PositionWiseFeedForward(config)
        self.norm2 = LayerNorm(dim, eps)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, mask):
        h = self.attn(x, mask)
        h = self.norm1(x + self.drop(self.proj(h)))
        return self.norm2(h + self.drop(self.pwff(h)))


class Transformer(nn.Module):
    def __init__(self, config: dict, bug: Bug, eps: float):
        super().__init__()
        self.embed = Embeddings(config, bug, eps)
        self.blocks = nn.ModuleList(Block(config, bug, eps) for _ in range(config["num_hidden_layers"]))

    def forward(self, x, seg, mask):
        h = self.embed(x, seg)
        for block in self.blocks:
            h = block(h, mask)
        return h


class Classifier(nn.Module):
    def __init__(self, config: dict = CONFIG, bug: Bug = Bug.NONE):
        super().__init__()
        eps = 1e-5 if bug is Bug.LAYER_NORM_EPS else config["layer_norm_eps"]
        self.transformer = Transformer(config, bug, eps)
        self.fc = nn.Linear(config["hidden_size"], config["hidden_size"])
        self.activ = nn.Tanh()
        self.drop = nn.Dropout(0.1)
        self.classifier = nn.Linear(config["hidden_size"], config["num_labels"])

    def forward(self, input_ids, segment_ids, input_mask):
        h = self.transformer(input_ids, segment_ids, input_mask)
        pooled_h = self.activ(self.fc(h[:, 0]))
        return self.classifier(self.drop(pooled_h))


_NAMES = {  # the port's name -> the reference's, below a block / the embeddings
    "attn.proj_q": "attention.self.query",
    "attn.proj_k": "attention.self.key",
    "attn.proj_v": "attention.self.value",
    "proj": "attention.output.dense",
    "pwff.fc1": "intermediate.dense",
    "pwff.fc2": "output.dense",
}
_NORMS = {"norm1": "attention.output.LayerNorm", "norm2": "output.LayerNorm"}


def _converted(state: dict, config: dict) -> dict:
    prefix = "bert.embeddings."
    weights = {
        "transformer.embed.tok_embed.weight": state[prefix + "word_embeddings.weight"],
        "transformer.embed.pos_embed.weight": state[prefix + "position_embeddings.weight"],
        "transformer.embed.seg_embed.weight": state[prefix + "token_type_embeddings.weight"],
        "transformer.embed.norm.gamma": state[prefix + "LayerNorm.weight"],
        "transformer.embed.norm.beta": state[prefix + "LayerNorm.bias"],
        "fc.weight": state["bert.pooler.dense.weight"],
        "fc.bias": state["bert.pooler.dense.bias"],
        "classifier.weight": state["classifier.weight"],
        "classifier.bias": state["classifier.bias"],
    }
    for layer in range(config["num_hidden_layers"]):
        ours, theirs = f"transformer.blocks.{layer}.", f"bert.encoder.layer.{layer}."
        for name, their_name in _NAMES.items():
            for kind in ("weight", "bias"):
                weights[f"{ours}{name}.{kind}"] = state[f"{theirs}{their_name}.{kind}"]
        for name, their_name in _NORMS.items():
            weights[f"{ours}{name}.gamma"] = state[f"{theirs}{their_name}.weight"]
            weights[f"{ours}{name}.beta"] = state[f"{theirs}{their_name}.bias"]
    return weights


def port(reference: nn.Module, style: Style = Style.PLAIN, bug: Bug = Bug.NONE) -> Classifier:
    """The port with ``bug`` planted, its weights converted from the reference's."""
    if style is not Style.PLAIN:
        raise ValueError(f"the BERT port has one style, not {style}")
    model = Classifier(CONFIG, bug)
    model.load_state_dict(_converted(dict(reference.state_dict()), CONFIG))
    return model.eval()


def final_output(model: nn.Module, given: dict) -> torch.Tensor:
    """The logits, whichever model ``model`` is (the port takes its inputs positionally)."""
    if isinstance(model, Classifier):
        return model(given["input_ids"], given["token_type_ids"], given["attention_mask"])
    return model(**given).logits
