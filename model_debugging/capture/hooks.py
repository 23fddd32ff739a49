"""Forward hooks that record submodule outputs into the buffers of the call that asked for them.

Each capturing call brings the model's hooks in line with its current tree and declarations, so
layers appended or replaced after an earlier capture, and recorders reassigned since, are recorded
like the original ones. Installed hooks stay in place; each one looks up the buffers of the current
call in a context variable and returns at once when that call did not request its field. Python
starts every thread with an empty context, so concurrent calls never see each other's buffers.
"""

from __future__ import annotations

import threading
import weakref
from contextvars import ContextVar
from typing import NamedTuple

import torch
from torch import nn

from model_debugging.capture.recorder import RECORDER_STATE_FIELDS, OutputRecorder, recorders_from_declaration

__all__ = ["active_buffers", "declares_recorders", "remove_capture_hooks", "sync_capture_hooks"]

# field name -> values recorded so far, for the innermost capturing call of this context
active_buffers: ContextVar[dict[str, list] | None] = ContextVar(
    "model_debugging_capture_buffers", default=None
)

_OWNER = "_model_debugging_capture_owner"
_install_lock = threading.RLock()


class _Owner:
    """Marks the hooks one declaring model installed and remembers the modules holding them.

    A copy of the model (``copy.deepcopy``, pickling) gets a fresh owner, which its copied hooks
    then point to, so the copy keeps recording exactly once.
    """

    __slots__ = ("__weakref__", "hooked", "synced_tree")

    def __init__(self) -> None:
        self.hooked: weakref.WeakSet[nn.Module] = weakref.WeakSet()
        # the tree as the last sync saw it (see _tree_state); None until the first sync
        self.synced_tree: list | None = None

    def __deepcopy__(self, memo: dict) -> _Owner:
        return _Owner()

    def __reduce__(self):
        return (_Owner, ())


class HookSpec(NamedTuple):
    """What one hook records; ``owner`` stands for the model whose declaration asked for it."""

    owner: _Owner
    field: str
    index: int
    initial_input: bool


class _RecordingHook:
    """Appends one item of a module's output to the active call's buffer for ``field``."""

    __slots__ = ("path", "spec")

    def __init__(self, spec: HookSpec, path: str):
        self.spec = spec
        self.path = path

    # Registered with kwargs; torch marks that a moment after adding the hook, so a forward running
    # in another thread during installation may call it without them.
    def __call__(self, module: nn.Module, args: tuple, *kwargs_and_output):
        buffers = active_buffers.get()
        if buffers is None:
            return
        buffer = buffers.get(self.spec.field)
        if buffer is None:
            return
        if self.spec.initial_input and self.spec.field == "hidden_states" and not buffer:
            kwargs = kwargs_and_output[0] if len(kwargs_and_output) == 2 else {}
            buffer.append(_first_input(args, kwargs))
        value = self._select(module, kwargs_and_output[-1])
        if value is not None:
            buffer.append(value)

    def _select(self, module: nn.Module, output):
        if not isinstance(output, (tuple, list)) and not hasattr(output, "to_tuple"):
            return output
        try:
            return output[self.spec.index]
        except IndexError:
            raise IndexError(
                f"cannot record {self.spec.field!r} from {self.path or 'the model'} ({type(module).__name__}): "
                f"its output has {len(output)} items, the recorder reads index {self.spec.index}"
            ) from None


def _first_input(args: tuple, kwargs: dict):
    """The tensor entering the first hidden-state layer: its first positional or tensor argument."""
    if args:
        return args[0]
    if "hidden_states" in kwargs:
        return kwargs["hidden_states"]
    return next((value for value in kwargs.values() if isinstance(value, torch.Tensor)), None)


_MISSING = object()


def declaration_of(module: nn.Module):
    """``module._can_record_outputs`` (instance first, then class), without nn.Module's slow ``__getattr__``."""
    declared = module.__dict__.get("_can_record_outputs", _MISSING)
    return getattr(type(module), "_can_record_outputs", None) if declared is _MISSING else declared


def declares_recorders(module: nn.Module) -> bool:
    """A module declaring ``_can_record_outputs`` (even ``{}``) owns the recording of its subtree."""
    return declaration_of(module) is not None


@torch.compiler.disable
def sync_capture_hooks(model: nn.Module) -> None:
    """Give ``model`` and its sub-models exactly the hooks their current tree and declarations call for.

    Adds hooks to matching modules that lack them (new layers, new recorder targets) and removes this
    model's hooks from modules that no longer match or left the tree. Nothing is changed when the
    hooks are already right, so concurrent forwards are not disturbed. Runs eagerly under
    ``torch.compile``; safe to call from many threads.
    """
    with _install_lock:
        owner = _owner_of(model)
        if owner.synced_tree is not None and _unchanged(owner.synced_tree, model):
            return
        _sync(model)
        owner.synced_tree = _tree_state(model)


def _owner_of(model: nn.Module) -> _Owner:
    owner = model.__dict__.get(_OWNER)
    if owner is None:
        owner = model.__dict__[_OWNER] = _Owner()
    return owner


def _tree_state(model: nn.Module) -> list:
    """Every module's path, a weak reference to it, and its declaration's content: what the hooks depend on."""
    return [(name, weakref.ref(module), _declaration_state(module)) for name, module in model.named_modules()]


def _unchanged(previous: list, model: nn.Module) -> bool:
    current = list(model.named_modules())
    return len(current) == len(previous) and all(
        name == current_name and reference() is module and declared == _declaration_state(module)
        for (name, reference, declared), (current_name, module) in zip(previous, current, strict=True)
    )


def _declaration_state(module: nn.Module):
    """The content of a declaration, copied: a recorder changed in place no longer compares equal."""
    declared = declaration_of(module)
    if declared is None:
        return None
    return tuple((field, _item_state(item)) for field, item in declared.items())


def _item_state(item):
    if isinstance(item, (list, tuple)):
        return tuple(_item_state(part) for part in item)
    if isinstance(item, (type, str)):
        return item
    return (type(item), *(getattr(item, name, None) for name in RECORDER_STATE_FIELDS))


def _sync(model: nn.Module) -> None:
    recorders = recorders_from_declaration(declaration_of(model), type(model).__name__)
    owner = _owner_of(model)
    wanted: dict[nn.Module, dict[HookSpec, str]] = {}
    sub_models: list[nn.Module] = []
    _collect(model, "", owner, recorders, wanted, sub_models)
    for module in [*owner.hooked, *(module for module in wanted if module not in owner.hooked)]:
        _apply(module, owner, wanted.get(module, {}))
        if module in wanted:
            owner.hooked.add(module)
        else:
            owner.hooked.discard(module)
    for sub_model in sub_models:
        _sync(sub_model)


def _collect(
    module: nn.Module,
    path: str,
    owner: _Owner,
    recorders: list[tuple[str, OutputRecorder]],
    wanted: dict[nn.Module, dict[HookSpec, str]],
    sub_models: list[nn.Module],
) -> None:
    for name, child in module.named_children():
        if declares_recorders(child):
            # a nested sub-model records with its own declaration, paths relative to itself
            if child not in sub_models:
                sub_models.append(child)
        else:
            _collect(child, f"{path}.{name}" if path else name, owner, recorders, wanted, sub_models)
    for field, recorder in recorders:
        if recorder.matches(module, path):
            spec = HookSpec(
                owner, field, recorder.resolved_index(field), recorder.capture_initial_hidden_state
            )
            # a module registered under two names is visited twice but records once
            wanted.setdefault(module, {}).setdefault(spec, path)


def _apply(module: nn.Module, owner: _Owner, wanted: dict[HookSpec, str]) -> None:
    present = set()
    for hook_id, hook in list(module._forward_hooks.items()):
        if isinstance(hook, _RecordingHook) and hook.spec.owner is owner:
            if hook.spec in wanted and hook.spec not in present:
                present.add(hook.spec)
            else:
                del module._forward_hooks[hook_id]
                module._forward_hooks_with_kwargs.pop(hook_id, None)
    for spec, path in wanted.items():
        if spec not in present:
            module.register_forward_hook(_RecordingHook(spec, path), with_kwargs=True)


def remove_capture_hooks(model: nn.Module) -> None:
    """Remove every recording hook from ``model`` and its submodules; the next capture reinstalls them.

    Use it to return a model to exactly zero hook overhead. (Changing ``_can_record_outputs`` or a
    recorder no longer needs it: the next capture follows the change.)
    """
    with _install_lock:
        for module in model.modules():
            for hook_id, hook in list(module._forward_hooks.items()):
                if isinstance(hook, _RecordingHook):
                    del module._forward_hooks[hook_id]
                    module._forward_hooks_with_kwargs.pop(hook_id, None)
            module.__dict__.pop(_OWNER, None)
