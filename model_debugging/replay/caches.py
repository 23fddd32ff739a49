"""Rebuilding the key/value cache a transformers model passes to its decoder layers and attention.

A model traced with its default ``use_cache`` creates an empty ``DynamicCache`` (an
``EncoderDecoderCache`` of two for an encoder-decoder) at the start of the forward and passes it
down; the trace records only its repr, e.g. ``DynamicCache(layers=[DynamicLayer, DynamicLayer])``.
When the traced forward was given no cache, every layer's first call found its own slot of that
cache empty, so a fresh cache of the same class is equivalent for it: replay passes one, built as
the model builds it (with the candidate's config when it has one). A forward that was given a
cache (the later steps of ``generate``) read keys and values of earlier tokens that the trace does
not hold: those calls are not replayed, and the reason says so. So is a module's second call in
one forward (its slot was filled by the first).
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from torch import nn

from model_debugging.debugger.trace_format.records import TensorRecord, Trace, TraceNode
from model_debugging.replay.arguments import UnrebuildableValue

_CLASS_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")
REBUILT_CLASSES = ("DynamicCache", "EncoderDecoderCache")


def cache_class(record: TensorRecord) -> str | None:
    """The cache class a recorded repr names (``DynamicCache(...)``), None for any other value."""
    text = record.text or ""
    match = _CLASS_NAME.match(text)
    return match.group(1) if match and match.group(1).endswith("Cache") and text.endswith(")") else None


def given_cache(trace: Trace) -> TensorRecord | None:
    """The first cache among the inputs of the trace's top-level call, if it was given one."""
    if not trace.nodes:
        return None
    return next((record for record in trace.nodes[0].inputs if cache_class(record)), None)


class CacheRebuilder:
    """Turns a recorded cache repr into a fresh cache, when a fresh one is what the call found."""

    def __init__(self, trace: Trace, model: nn.Module):
        self._given = given_cache(trace)
        self._config = getattr(model, "config", None)

    def rebuild(self, node: TraceNode, record: TensorRecord) -> Any:
        """A fresh cache for ``record`` of ``node``'s inputs; None when the record is no cache."""
        name = cache_class(record)
        if name is None:
            return None
        if self._given is not None:
            raise UnrebuildableValue(
                record.sub_path,
                f"the {name} may hold earlier tokens: the traced forward was given a cache "
                f"({self._given.sub_path}), and the trace does not record its keys and values; "
                "trace a forward that starts without a cache to replay it",
            )
        if node.call_index > 0:
            raise UnrebuildableValue(
                record.sub_path, f"a {name} already filled by this module's earlier call in the same forward"
            )
        if name not in REBUILT_CLASSES:
            raise UnrebuildableValue(
                record.sub_path, f"a {name}: replay rebuilds only {' and '.join(REBUILT_CLASSES)}"
            )
        try:
            cache_utils = importlib.import_module("transformers.cache_utils")
        except ImportError:
            raise UnrebuildableValue(record.sub_path, f"a {name}: transformers is not installed") from None
        if name == "DynamicCache":
            return self._dynamic(cache_utils)
        return cache_utils.EncoderDecoderCache(self._dynamic(cache_utils), self._dynamic(cache_utils))

    def _dynamic(self, cache_utils: Any) -> Any:
        if self._config is not None and hasattr(self._config, "get_text_config"):
            return cache_utils.DynamicCache(config=self._config)
        return cache_utils.DynamicCache()
