"""What the evaluation reads of a modeling file's forwards and caches is read when the library file
is parsed, from a tree without the bodies none of those readings looks at: the readings are those
of the whole file's tree."""

import ast
import dataclasses

import pytest

from model_debugging.skips.parse.library import read
from model_debugging.skips.parse.library.unread_bodies import BodiesRead, without_unread_bodies

PATH = "src/transformers/models/toy/modeling_toy.py"

# written as the library writes a decoder with an output dataclass, a cache class, layers and a
# part built from its configuration
MODELING = """
from dataclasses import dataclass

import torch
from torch import nn

from ...cache_utils import Cache, DynamicCache
from ...modeling_outputs import CausalLMOutputWithPast
from ...utils import ModelOutput, auto_docstring, can_return_tuple
from ..auto import AutoModel


@dataclass
class ToyModelOutputWithPast(ModelOutput):
    last_hidden_state: torch.FloatTensor | None = None
    past_key_values: Cache | None = None


class ToyStaticCache(DynamicCache):
    def grow(self, layer):
        return ToyStaticCache.build(layer)  # a cache's own methods build caches: not the model's


class ToyAttention(nn.Module):
    def forward(self, hidden_states, past_key_values=None, **kwargs):
        if past_key_values is not None:
            hidden_states = past_key_values.update(hidden_states, self.layer_idx)
        return self.o_proj(hidden_states)


class ToyMLP(nn.Module):
    def forward(self, x):
        return self.down(self.act(self.up(x)))  # MARK_MLP


class ToyModel(ToyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.vision = AutoModel.from_config(config.vision_config)

    @can_return_tuple
    @auto_docstring
    def forward(
        self, input_ids=None, past_key_values=None, use_cache: bool | None = None, **kwargs
    ) -> ToyModelOutputWithPast:
        if self.gradient_checkpointing and self.training:
            use_cache = False
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        hidden = self.layers(input_ids, past_key_values=past_key_values, use_cache=use_cache, **kwargs)
        return ToyModelOutputWithPast(last_hidden_state=hidden, past_key_values=past_key_values)

    def _scale(self, x):
        return x * self.scale  # MARK_HELPER


class ToyForCausalLM(ToyPreTrainedModel):
    @auto_docstring
    def forward(self, input_ids=None, **kwargs) -> tuple | CausalLMOutputWithPast:
        return self.model(input_ids, **kwargs)

    def prepare_inputs_for_generation(self, input_ids, **kwargs):
        return {"past_key_values": ToyStaticCache(self.config)}  # generation only
"""


def _whole_file(source: str, path: str, read_bodies: BodiesRead):
    return ast.parse(source, filename=path)


def _plain(value):
    """``value`` with its syntax trees dumped: readings compared by what they hold."""
    if isinstance(value, ast.AST):
        return ast.dump(value)
    if dataclasses.is_dataclass(value):
        return (
            type(value).__name__,
            *(_plain(getattr(value, item.name)) for item in dataclasses.fields(value)),
        )
    if isinstance(value, (tuple, list)):
        return tuple(map(_plain, value))
    return value


def _readings(record):
    return _plain(record.cache_reading), {info.name: _plain(info.forward) for info in record.classes}


def _both(source: str, monkeypatch):
    reduced = read.read_library_file(PATH, source)
    with monkeypatch.context() as patched:
        patched.setattr(read, "parse_library_source", _whole_file)
        whole = read.read_library_file(PATH, source)
    assert reduced.error is None and whole.error is None
    return reduced, whole


def test_the_readings_are_those_of_the_whole_file(monkeypatch):
    reduced, whole = _both(MODELING, monkeypatch)
    assert _readings(reduced) == _readings(whole)
    gating = reduced.cache_reading.gating
    assert (gating.gated, gating.ungated, gating.overridden, gating.delegated) == (True, False, False, True)
    assert gating.disabled == ()  # turned off only while training with gradient checkpointing
    assert reduced.cache_reading.parts == (("AutoModel", "vision_config"),)
    assert reduced.cache_reading.builds_no_cache is False
    forwards = {info.name: info.forward for info in reduced.classes}
    assert forwards["ToyModel"].output_names == ("ToyModelOutputWithPast",)
    assert forwards["ToyModel"].hands_on_use_cache is True
    assert forwards["ToyForCausalLM"].output_names == ("tuple", "CausalLMOutputWithPast")
    assert forwards["ToyForCausalLM"].hands_on_use_cache is True  # through **kwargs
    assert forwards["ToyForCausalLM"].reads_configured_use_cache is False
    assert forwards["ToyModelOutputWithPast"] is None  # no forward


def test_only_bodies_no_reading_looks_at_are_left_out():
    elided = without_unread_bodies(MODELING, read.BODIES_READ)
    assert elided is not None
    for gone in ("MARK_MLP", "MARK_HELPER"):
        assert gone not in elided.text
    for text in (
        "DynamicCache(config=self.config)",
        "self.model(input_ids, **kwargs)",
        "past_key_values.update",
    ):
        assert text in elided.text


# each a body a reading must see, written the ways Python allows
@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("return (DynamicCache  # a comment\n        )(self.config)", {"builds_no_cache": False}),
        (
            "cache = DynamicCache \\\n            .from_legacy_cache(x)\n        return cache",
            {"builds_no_cache": False},
        ),
        (
            "next_cache = ()\n        next_cache \\\n            += (x,)\n        return next_cache",
            {"builds_no_cache": False},
        ),
        (
            "from ..other.modeling_other import OtherModel\n        return OtherModel",
            {"builds_no_cache": False},
        ),
        ("return AutoModel._from_config(self.text_config)", {"parts": None}),
    ],
    ids=[
        "parenthesized-cache-call",
        "continued-cache-method",
        "continued-augmented-cache",
        "local-import",
        "from-config",
    ],
)
def test_a_helper_body_a_file_reading_needs_is_kept(method, expected, monkeypatch):
    source = (
        "class ToyModel(ToyPreTrainedModel):\n"
        "    def forward(self, x):\n        return self._helper(x)\n\n"
        f"    def _helper(self, x):\n        {method}\n"
    )
    reduced, whole = _both(source, monkeypatch)
    assert _readings(reduced) == _readings(whole)
    for name, value in expected.items():
        assert getattr(reduced.cache_reading, name) == value


@pytest.mark.parametrize(
    ("body", "field", "expected"),
    [
        ("use_cache = True\n        return self.model(x)", "sets_use_cache", True),
        ("return self.model(x, use_cache=False)", "hands_on_use_cache", None),
        ("return self.model(\n            x, **options\n        )", "hands_on_use_cache", True),
        ("return self.model(x) if self.config.use_cache else x", "reads_configured_use_cache", True),
    ],
    ids=["sets", "passes-another-value", "passes-keywords", "reads-configured"],
)
def test_a_forward_body_a_forward_reading_needs_is_kept(body, field, expected, monkeypatch):
    source = (
        "class ToyModel(ToyPreTrainedModel):\n"
        f"    @auto_docstring\n    def forward(self, x, **options):\n        {body}\n"
    )
    reduced, whole = _both(source, monkeypatch)
    assert _readings(reduced) == _readings(whole)
    (model,) = reduced.classes
    assert getattr(model.forward, field) == expected
