"""Forward hooks that record submodule outputs into the buffers of the call that asked for them.

Hooks are installed once per model and stay in place; each one looks up the buffers of the current
call in a context variable and returns at once when that call did not request its field. Python
starts every thread with an empty context, so concurrent calls never see each other's buffers.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar

import torch
from torch import nn

from model_debugging.capture.recorder import OutputRecorder, recorders_from_declaration

__all__ = ["active_buffers", "ensure_capture_hooks", "remove_capture_hooks"]

# field name -> values recorded so far, for the innermost capturing call of this context
active_buffers: ContextVar[dict[str, list] | None] = ContextVar(
    "model_debugging_capture_buffers", default=None
)

_INSTALLED = "_model_debugging_capture_hooks"
_install_lock = threading.Lock()


class _RecordingHook:
    """Appends one item of a module's output to the active call's buffer for ``field``."""

    __slots__ = ("field", "index", "path")

    def __init__(self, field: str, index: int, path: str):
        self.field = field
        self.index = index
        self.path = path

    # Registered with kwargs; torch marks that a moment after adding the hook, so a forward running
    # in another thread during installation may call it without them.
    def __call__(self, module: nn.Module, args: tuple, *kwargs_and_output):
        buffers = active_buffers.get()
        if buffers is None:
            return
        buffer = buffers.get(self.field)
        if buffer is None:
            return
        if self.field == "hidden_states" and not buffer:
            kwargs = kwargs_and_output[0] if len(kwargs_and_output) == 2 else {}
            buffer.append(_first_input(args, kwargs))
        value = self._select(module, kwargs_and_output[-1])
        if value is not None:
            buffer.append(value)

    def _select(self, module: nn.Module, output):
        if not isinstance(output, (tuple, list)) and not hasattr(output, "to_tuple"):
            return output
        try:
            return output[self.index]
        except IndexError:
            raise IndexError(
                f"cannot record {self.field!r} from {self.path or 'the model'} ({type(module).__name__}): "
                f"its output has {len(output)} items, the recorder reads index {self.index}"
            ) from None


def _first_input(args: tuple, kwargs: dict):
    """The tensor entering the first hidden-state layer: its first positional or tensor argument."""
    if args:
        return args[0]
    if "hidden_states" in kwargs:
        return kwargs["hidden_states"]
    return next((value for value in kwargs.values() if isinstance(value, torch.Tensor)), None)


def declares_recorders(module: nn.Module) -> bool:
    """A module declaring ``_can_record_outputs`` (even ``{}``) owns the recording of its subtree."""
    return getattr(module, "_can_record_outputs", None) is not None


def ensure_capture_hooks(model: nn.Module) -> None:
    """Install ``model``'s recording hooks unless they already are; safe to call from many threads."""
    if model.__dict__.get(_INSTALLED):
        return
    with _install_lock:
        if not model.__dict__.get(_INSTALLED):
            _install(model)


def _install(model: nn.Module) -> None:
    recorders = recorders_from_declaration(getattr(model, "_can_record_outputs", None), type(model).__name__)
    _install_in_subtree(model, "", recorders)
    model.__dict__[_INSTALLED] = True


def _install_in_subtree(module: nn.Module, path: str, recorders: list[tuple[str, OutputRecorder]]) -> None:
    for name, child in module.named_children():
        if not declares_recorders(child):
            _install_in_subtree(child, f"{path}.{name}" if path else name, recorders)
        elif not child.__dict__.get(_INSTALLED):
            # a nested sub-model records with its own declaration, paths relative to itself
            _install(child)
    for field, recorder in recorders:
        if not recorder.matches(module, path):
            continue
        index = recorder.resolved_index(field)
        # a module registered under two names is visited twice but must record once
        if not any(
            isinstance(hook, _RecordingHook) and (hook.field, hook.index) == (field, index)
            for hook in module._forward_hooks.values()
        ):
            module.register_forward_hook(_RecordingHook(field, index, path), with_kwargs=True)


def remove_capture_hooks(model: nn.Module) -> None:
    """Remove every recording hook from ``model`` and its submodules; the next capture reinstalls them.

    Use it after changing a model's ``_can_record_outputs`` (`patch_output_recorders` does), or to
    return a model to exactly zero hook overhead.
    """
    with _install_lock:
        for module in model.modules():
            for hook_id, hook in list(module._forward_hooks.items()):
                if isinstance(hook, _RecordingHook):
                    del module._forward_hooks[hook_id]
                    module._forward_hooks_with_kwargs.pop(hook_id, None)
            module.__dict__.pop(_INSTALLED, None)
