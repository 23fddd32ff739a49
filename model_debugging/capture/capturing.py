"""`@capture_outputs`: collect hidden states, attentions, ... of a forward pass through hooks."""

from __future__ import annotations

import functools
from collections.abc import Callable

from torch import nn

from model_debugging.capture.hooks import active_buffers, ensure_capture_hooks

__all__ = ["capture_outputs"]


def capture_outputs(func: Callable | None = None, *, tie_last_hidden_states: bool = True):
    """Decorate a base model's ``forward`` so it returns the outputs its class declares it can record.

    The model class maps output fields to the submodules producing them in ``_can_record_outputs``
    (see `OutputRecorder`). For each field, ``output_<field>`` is read from the call's keyword
    arguments, else from ``self.config`` (``cross_attentions`` follows ``output_attentions`` unless
    ``output_cross_attentions`` is given). Requested fields are collected, as tuples, into the output
    object the forward returns; ``return_dict`` (kwarg, else ``config.return_dict``, else True) set
    to False returns ``output.to_tuple()`` instead. ``return_dict`` is removed from the kwargs passed
    to the forward; the ``output_*`` flags are passed through so layers can act on them.

    Hooks are installed on the matching submodules the first time anything is requested, once per
    model, under a lock. A call that requests nothing does not install them, and once installed they
    return immediately for calls that did not request their field, including calls from other threads.

    ``hidden_states`` starts with the input of the first recorded layer, then each layer's output;
    with ``tie_last_hidden_states`` (overridden by ``config.tie_last_hidden_states`` when set) the
    last entry is replaced by the returned ``last_hidden_state``, i.e. after the final norm.

    Args:
        tie_last_hidden_states (`bool`, *optional*, defaults to `True`):
            Whether the last hidden state is the returned ``last_hidden_state``. Turn it off when the
            last layer's own output is wanted (vision encoders).

    Example:
        ```python
        class Decoder(nn.Module):
            _can_record_outputs = {"hidden_states": Block, "attentions": Attention}

            @capture_outputs
            def forward(self, input_ids, **kwargs):
                ...
                return BaseModelOutput(last_hidden_state=hidden)

        out = Decoder(config)(input_ids, output_hidden_states=True)
        len(out.hidden_states) == config.num_hidden_layers + 1
        ```
    """

    def decorate(forward: Callable) -> Callable:
        @functools.wraps(forward)
        def wrapper(self: nn.Module, *args, **kwargs):
            config = getattr(self, "config", None)
            return_dict = _resolve_return_dict(config, kwargs.pop("return_dict", None))
            fields = _requested_fields(self, config, kwargs)
            if fields:
                ensure_capture_hooks(self)
            # Set even when empty: a nested model that records nothing must not feed an outer call.
            buffers = {field: [] for field in fields}
            token = active_buffers.set(buffers)
            try:
                outputs = forward(self, *args, **kwargs)
            finally:
                active_buffers.reset(token)

            if buffers:
                _fill(self, config, outputs, buffers, tie_last_hidden_states)
            if not return_dict:
                if not hasattr(outputs, "to_tuple"):
                    raise TypeError(_not_an_output_message(self, outputs))
                return outputs.to_tuple()
            return outputs

        return wrapper

    return decorate if func is None else decorate(func)


def _resolve_return_dict(config, passed: bool | None) -> bool:
    if passed is not None:
        return passed
    configured = getattr(config, "return_dict", None)
    return True if configured is None else configured


def _requested_fields(model: nn.Module, config, kwargs: dict) -> list[str]:
    declared = getattr(model, "_can_record_outputs", None) or {}
    requested = []
    for field in declared:
        flag = _flag(f"output_{field}", config, kwargs)
        if flag is None and field == "cross_attentions":
            flag = _flag("output_attentions", config, kwargs)
        if flag:
            requested.append(field)
    return requested


def _flag(name: str, config, kwargs: dict) -> bool | None:
    passed = kwargs.get(name)
    return passed if passed is not None else getattr(config, name, None)


def _fill(model: nn.Module, config, outputs, buffers: dict[str, list], tie_default: bool) -> None:
    if not hasattr(outputs, "__setitem__") or isinstance(outputs, (tuple, list)):
        raise TypeError(_not_an_output_message(model, outputs))
    hidden_states = buffers.get("hidden_states")
    if hidden_states:
        configured_tie = getattr(config, "tie_last_hidden_states", None)
        tie = tie_default if configured_tie is None else configured_tie
        last_hidden_state = getattr(outputs, "last_hidden_state", None)
        if tie and last_hidden_state is not None:
            hidden_states[-1] = last_hidden_state
    for field, values in buffers.items():
        outputs[field] = tuple(values)


def _not_an_output_message(model: nn.Module, outputs) -> str:
    return (
        f"{type(model).__name__}.forward is decorated with @capture_outputs and must return a ModelOutput-like "
        f"object (item assignment and to_tuple()), got {type(outputs).__name__}"
    )
