"""What one call to a ``@capture_outputs`` forward asks for: fields, hidden-state indices, warnings.

Flags come from the call's ``output_<field>`` keywords, else the model's config. Besides ``True``,
``output_hidden_states`` may be an index or a list of indices (negative ones count from the end).
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass

from torch import nn

from model_debugging.capture.hooks import declares_recorders

__all__ = ["CaptureRequest", "request_for_call", "selected_hidden_states"]

# Fields that follow ``output_attentions`` unless their own flag is given (transformers does the same).
ATTENTION_FOLLOWERS = ("cross_attentions", "mask_decoder_attentions")

_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


@dataclass(frozen=True)
class CaptureRequest:
    """The fields one call records, and the hidden-state indices it keeps (None: all of them)."""

    fields: tuple[str, ...]
    hidden_state_indices: tuple[int, ...] | None = None


def request_for_call(model: nn.Module, config, kwargs: dict) -> CaptureRequest:
    """Read the ``output_*`` flags of one call; warn once per model class about undeclared ones."""
    declared = getattr(model, "_can_record_outputs", None) or {}
    fields = []
    indices = None
    for field in declared:
        flag = _flag(f"output_{field}", config, kwargs)
        if flag is None and field in ATTENTION_FOLLOWERS:
            flag = _flag("output_attentions", config, kwargs)
        if field == "hidden_states" and _is_index_selection(flag):
            indices = (flag,) if isinstance(flag, int) else tuple(flag)
            fields.append(field)
        elif flag:
            fields.append(field)
    _warn_about_undeclared(model, declared, kwargs)
    return CaptureRequest(tuple(fields), indices)


def _flag(name: str, config, kwargs: dict):
    passed = kwargs.get(name)
    return passed if passed is not None else getattr(config, name, None)


def _is_index_selection(flag) -> bool:
    if isinstance(flag, bool):
        return False
    if isinstance(flag, int):
        return True
    if isinstance(flag, (list, tuple)):
        if not all(isinstance(index, int) and not isinstance(index, bool) for index in flag):
            raise TypeError(f"output_hidden_states must be a bool, an int or a list of ints, got {flag!r}")
        return True
    return False


def selected_hidden_states(recorded: list, indices: tuple[int, ...], model: nn.Module) -> list:
    """The recorded hidden states at ``indices``, in layer order, each once; warns once about indices out of range."""
    count = len(recorded)
    kept = sorted({index % count for index in indices if -count <= index < count})
    if len(kept) < len(set(indices)):
        missing = [index for index in indices if not -count <= index < count]
        _warn_once(
            model,
            f"hidden state indices {missing}",
            f"{type(model).__name__}: output_hidden_states selects {missing}, outside the {count} hidden states "
            "recorded (from 0 or -1); they are left out",
        )
    return [recorded[index] for index in kept]


def _warn_about_undeclared(model: nn.Module, declared: dict, kwargs: dict) -> None:
    for name, value in kwargs.items():
        if not name.startswith("output_") or value is None or value is False:
            continue
        field = name.removeprefix("output_")
        if field in declared or (field == "attentions" and any(f in declared for f in ATTENTION_FOLLOWERS)):
            continue
        if _already_warned(model, field) or _declared_by_a_sub_model(model, field):
            continue
        _warn_once(
            model,
            field,
            f"{type(model).__name__} was asked for {name}={value!r} but its _can_record_outputs declares "
            f"{sorted(declared)}; nothing is recorded for {field!r}",
        )


def _declared_by_a_sub_model(model: nn.Module, field: str) -> bool:
    return any(
        field in (module._can_record_outputs or {})
        for module in model.modules()
        if module is not model and declares_recorders(module)
    )


def _warning_key(model: nn.Module, subject: str) -> tuple[str, str]:
    return f"{type(model).__module__}.{type(model).__qualname__}", subject


def _already_warned(model: nn.Module, subject: str) -> bool:
    return _warning_key(model, subject) in _warned


def _warn_once(model: nn.Module, subject: str, message: str) -> None:
    key = _warning_key(model, subject)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, UserWarning, stacklevel=5)
