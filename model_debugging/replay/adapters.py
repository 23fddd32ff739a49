"""Argument adapters: calling a port's module whose signature differs from the reference's.

Replay calls each candidate module with the arguments the reference's module received. A port
written in plain PyTorch often takes them another way: the reference's decoder layer gets
``(hidden_states, attention_mask=<additive float mask>, position_ids=..., position_embeddings=(cos, sin))``,
the port's block wants ``(x, cos, sin, mask)`` with a boolean mask. An adapter says how to turn
one call into the other. It is a function that receives the candidate's module followed by the
reference's recorded arguments, exactly as the reference's module received them, and returns the
candidate's ``(args, kwargs)``::

    def block_arguments(block, hidden_states, attention_mask=None, position_embeddings=None, **_):
        cos, sin = position_embeddings
        return (hidden_states, cos, sin, attention_mask == 0), {}

    REPLAY_ADAPTERS = {Block: block_arguments, "layers.*.attn": attention_arguments}

Keys are candidate module classes (their subclasses too) or glob patterns over the candidate's
module paths relative to the model (``fnmatch``: ``*`` matches dots as well); a pattern wins over
a class. An adapter that needs other parts of the model (an embedding, a position bias computed
once per stack) can be built from it: give a function that takes the candidate model and returns
the mapping instead of the mapping. Pass either as ``replay_trace(..., adapters=...)``, or define
``REPLAY_ADAPTERS`` in the file or module ``--model`` names. Tensors arrive already on the
candidate's device and in its dtype. Only the module replay calls directly is adapted: the
modules it runs inside are called by the port's own code.
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from torch import nn

from model_debugging.replay.arguments import RecordedCall

Adapter = Callable[..., tuple[tuple, dict]]
# adapters by candidate class or path pattern, or a function of the candidate model returning them
AdapterSpec = Mapping[type | str, Adapter] | Callable[[nn.Module], Mapping[type | str, Adapter]] | None


class CannotCall(ValueError):
    """The candidate cannot be called with the recorded arguments; the message says why."""


class ArgumentAdapters:
    """The adapters of one replay, by candidate module class and by candidate path pattern."""

    def __init__(self, adapters: AdapterSpec = None, model: nn.Module | None = None):
        self._by_pattern: dict[str, Adapter] = {}
        self._by_class: dict[type, Adapter] = {}
        if adapters is None:
            return
        if callable(adapters) and not isinstance(adapters, Mapping):
            try:
                adapters = adapters(model)
            except Exception as error:
                raise ValueError(
                    f"building the argument adapters with {getattr(adapters, '__qualname__', adapters)!r} "
                    f"raised {type(error).__name__}: {error}"
                ) from None
        if not isinstance(adapters, Mapping):
            raise ValueError(
                f"argument adapters must be a mapping of module classes or path patterns to functions, "
                f"got a {type(adapters).__name__}"
            )
        for key, adapter in adapters.items():
            if not callable(adapter):
                raise ValueError(
                    f"the argument adapter for {key!r} is a {type(adapter).__name__}, not a function"
                )
            if isinstance(key, str):
                self._by_pattern[key] = adapter
            elif isinstance(key, type) and issubclass(key, nn.Module):
                self._by_class[key] = adapter
            else:
                raise ValueError(
                    f"argument adapter key {key!r}: expected a torch.nn.Module subclass or a module path pattern"
                )

    def __bool__(self) -> bool:
        return bool(self._by_pattern or self._by_class)

    def find(self, module: nn.Module, path: str) -> Adapter | None:
        """The adapter for the candidate ``module`` at ``path`` (relative to the model), if any."""
        for pattern, adapter in self._by_pattern.items():
            if fnmatch.fnmatchcase(path, pattern):
                return adapter
        for cls in type(module).__mro__:
            if cls in self._by_class:
                return self._by_class[cls]
        return None


def adapted_call(adapter: Adapter, module: nn.Module, call: RecordedCall) -> RecordedCall:
    """``call`` as ``adapter`` turns it into the candidate's; :class:`CannotCall` when the adapter fails."""
    name = getattr(adapter, "__qualname__", repr(adapter))
    try:
        result = adapter(module, *call.args, **call.kwargs)
    except Exception as error:
        raise CannotCall(f"the argument adapter {name} raised {type(error).__name__}: {error}") from None
    if (
        not isinstance(result, tuple)
        or len(result) != 2
        or not isinstance(result[0], (tuple, list))
        or not isinstance(result[1], Mapping)
    ):
        raise CannotCall(f"the argument adapter {name} must return (args, kwargs), got {_short(result)}")
    return RecordedCall(args=tuple(result[0]), kwargs=dict(result[1]))


def check_signature(function: Callable, call: RecordedCall, shown: str) -> None:
    """:class:`CannotCall` when ``function`` does not accept ``call``'s arguments (a port with another signature)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin without a signature: the call itself will tell
    try:
        signature.bind(*call.args, **call.kwargs)
    except TypeError as error:
        raise CannotCall(
            f"{shown}{signature} does not accept the recorded call ({_described(call)}): {error}; "
            "give replay an argument adapter (see the replay guide)"
        ) from None


def _described(call: RecordedCall) -> str:
    parts = [f"{len(call.args)} positional"] if call.args else []
    if call.kwargs:
        parts.append("keywords " + ", ".join(call.kwargs))
    return "; ".join(parts) or "no arguments"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
