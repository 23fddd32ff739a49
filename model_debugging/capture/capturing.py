"""`@capture_outputs`: collect hidden states, attentions, ... of a forward pass through hooks."""

from __future__ import annotations

import functools
from collections.abc import Callable

from torch import nn

from model_debugging.capture.hooks import active_buffers, sync_capture_hooks
from model_debugging.capture.requests import CaptureRequest, request_for_call, selected_hidden_states

__all__ = ["capture_outputs"]


def capture_outputs(func: Callable | None = None, *, tie_last_hidden_states: bool = True):
    """Decorate a base model's ``forward`` so it returns the outputs its class declares it can record.

    The model class maps output fields to the submodules producing them in ``_can_record_outputs``
    (see `OutputRecorder`). For each field, ``output_<field>`` is read from the call's keyword
    arguments, else from ``self.config`` (``cross_attentions`` and ``mask_decoder_attentions`` follow
    ``output_attentions`` unless their own flag is given). ``output_hidden_states`` may also be an
    index or a list of indices (negative ones count from the end): only those hidden states are
    returned, in layer order. Requested fields are collected, as tuples, into the output
    object the forward returns; ``return_dict`` (kwarg, else ``config.return_dict``, else True) set
    to False returns ``output.to_tuple()`` instead. ``return_dict`` is removed from the kwargs passed
    to the forward; the ``output_*`` flags are passed through so layers can act on them. Asking for
    an output that neither the model nor a sub-model declares warns once per model class.

    Each call that requests something first brings the hooks in line with the model as it is now
    (layers appended or replaced since the last capture are recorded too), under a lock. A call that
    requests nothing installs nothing, and installed hooks return immediately for calls that did not
    request their field, including calls from other threads.

    ``hidden_states`` starts with the input of the first recorded layer, then each layer's output;
    with ``tie_last_hidden_states`` (overridden by ``config.tie_last_hidden_states`` when set) the
    last entry is replaced by the returned ``vision_hidden_states`` when set, else
    ``last_hidden_state``, i.e. after the final norm.

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
            request = request_for_call(self, config, kwargs)
            if request.fields:
                sync_capture_hooks(self)
            # Set even when empty: a nested model that records nothing must not feed an outer call.
            buffers = {field: [] for field in request.fields}
            token = active_buffers.set(buffers)
            try:
                outputs = forward(self, *args, **kwargs)
            finally:
                active_buffers.reset(token)

            if buffers:
                _fill(self, config, outputs, buffers, request, tie_last_hidden_states)
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


def _fill(
    model: nn.Module, config, outputs, buffers: dict[str, list], request: CaptureRequest, tie_default: bool
) -> None:
    if not hasattr(outputs, "__setitem__") or isinstance(outputs, (tuple, list)):
        raise TypeError(_not_an_output_message(model, outputs))
    hidden_states = buffers.get("hidden_states")
    if hidden_states:
        configured_tie = getattr(config, "tie_last_hidden_states", None)
        if tie_default if configured_tie is None else configured_tie:
            _tie_last_hidden_state(hidden_states, outputs)
        if request.hidden_state_indices is not None:
            buffers["hidden_states"] = selected_hidden_states(
                hidden_states, request.hidden_state_indices, model
            )
    for field, values in buffers.items():
        outputs[field] = tuple(values)


def _tie_last_hidden_state(hidden_states: list, outputs) -> None:
    """The last entry becomes the returned final state: ``vision_hidden_states`` when set, else ``last_hidden_state``."""
    for name in ("vision_hidden_states", "last_hidden_state"):
        final = getattr(outputs, name, None)
        if final is not None:
            hidden_states[-1] = final
            return


def _not_an_output_message(model: nn.Module, outputs) -> str:
    return (
        f"{type(model).__name__}.forward is decorated with @capture_outputs and must return a ModelOutput-like "
        f"object (item assignment and to_tuple()), got {type(outputs).__name__}"
    )
