"""Old module paths kept for one release: each name is looked up in its new module, with a warning."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib import import_module


def moved_module(old: str, new: str) -> Callable[[str], object]:
    """Return a module ``__getattr__`` for ``old`` that forwards every name to module ``new``.

    Each access warns with a ``DeprecationWarning`` that points at the importing line.
    """

    def __getattr__(name: str) -> object:
        if name.startswith("__"):  # module dunders (__path__, __file__ probes): not forwarded
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old} moved to {new}; import {name} from there ({old} will be removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(import_module(new), name)

    return __getattr__
