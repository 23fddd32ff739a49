"""Per-instance ``forward`` wrappers that several debugger contexts can add and remove in any order.

Each module's wrappers are kept as layers over the forward it had before the first context
(its own instance attribute, or none). Removing a context's layer rebuilds the module's forward
from the layers that remain, so exiting ``c1`` before ``c2`` leaves ``c2`` tracing alone, and once
the last layer is gone the module is exactly as it was. A wrapper whose context has exited
passes calls straight through, so even a wrapper still held somewhere (e.g. wrapped again by
other code) does nothing.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from torch import nn

_NOT_SET = object()
_LOCK = threading.RLock()


@dataclass(eq=False)
class _Layers:
    own_forward: object  # the instance's ``forward`` attribute before any layer, or _NOT_SET
    layers: list[tuple[object, Callable[[Callable], Callable]]] = field(default_factory=list)


_MODULE_LAYERS: weakref.WeakKeyDictionary[nn.Module, _Layers] = weakref.WeakKeyDictionary()


def _rebuild(module: nn.Module, entry: _Layers) -> None:
    if entry.own_forward is _NOT_SET:
        module.__dict__.pop("forward", None)
    else:
        module.__dict__["forward"] = entry.own_forward
    if not entry.layers:
        del _MODULE_LAYERS[module]
        return
    forward = module.forward
    for _, make_forward in entry.layers:
        forward = make_forward(forward)
    module.__dict__["forward"] = forward


class ForwardPatches:
    """The ``forward`` layers one context adds; :meth:`undo` removes exactly those."""

    def __init__(self) -> None:
        self._modules: list[nn.Module] = []

    def patch(self, module: nn.Module, make_forward: Callable[[Callable], Callable]) -> None:
        """Wrap ``module``'s current forward: ``make_forward(forward)`` returns the wrapper."""
        with _LOCK:
            entry = _MODULE_LAYERS.get(module)
            if entry is None:
                entry = _MODULE_LAYERS[module] = _Layers(module.__dict__.get("forward", _NOT_SET))
            entry.layers.append((self, make_forward))
            _rebuild(module, entry)
            self._modules.append(module)

    def undo(self) -> None:
        with _LOCK:
            for module in reversed(self._modules):
                entry = _MODULE_LAYERS.get(module)
                if entry is not None:
                    entry.layers = [layer for layer in entry.layers if layer[0] is not self]
                    _rebuild(module, entry)
            self._modules.clear()
