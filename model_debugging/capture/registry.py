"""The process-wide registry of class replacements: class name or regex -> replacement module class."""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Iterable, Mapping

from torch import nn

__all__ = [
    "PatchKeyNotFoundError",
    "PatchRules",
    "clear_patch_mapping",
    "current_patch_rules",
    "get_patch_mapping",
    "register_patch_mapping",
    "unregister_patch_mapping",
]


class PatchKeyNotFoundError(KeyError, ValueError):
    """A key to unregister is not in the registry.

    A `KeyError` (what earlier releases of this package raised) and a `ValueError` (what
    ``transformers.monkey_patching`` raises), so handlers written for either keep working.
    """

    def __str__(self) -> str:
        # KeyError would show the message quoted like a dict key
        return str(self.args[0])


_lock = threading.Lock()
# key -> (compiled pattern, or None for a key that is not a valid regex, replacement);
# insertion order is the order patterns are tried in
_mapping: dict[str, tuple[re.Pattern | None, type[nn.Module]]] = {}


def register_patch_mapping(mapping: Mapping[str, type[nn.Module]], overwrite: bool = False) -> None:
    """Register replacements for module classes, applied by `apply_patches` and `patch_output_recorders`.

    A key is an exact name or a regex tested with `re.search` (so ``"Attention$"`` matches every name
    ending in ``Attention``; anchor with ``^...$`` to match whole names). An exact key wins over
    patterns; among patterns, the first registered wins. A key that is not a valid regex is kept as an
    exact name, with a warning. The whole mapping is validated before anything is registered.

    Args:
        mapping (`Mapping[str, type[nn.Module]]`): name or pattern -> replacement class.
        overwrite (`bool`, *optional*, defaults to `False`): replace keys that are already registered.

    Raises:
        TypeError: a key is not a string, or a replacement is not a subclass of `nn.Module`.
        ValueError: a key is already registered and ``overwrite`` is False.
    """
    validated = {
        key: (_compile(key), _checked_replacement(key, replacement)) for key, replacement in mapping.items()
    }
    with _lock:
        duplicates = [key for key in validated if key in _mapping]
        if duplicates and not overwrite:
            raise ValueError(
                f"patch mapping already has {duplicates}; pass overwrite=True to replace "
                f"{'it' if len(duplicates) == 1 else 'them'}"
            )
        _mapping.update(validated)


def _compile(key) -> re.Pattern | None:
    if not isinstance(key, str) or not key:
        raise TypeError(f"patch mapping keys must be non-empty class names or patterns, got {key!r}")
    try:
        return re.compile(key)
    except re.error as error:
        warnings.warn(
            f"patch mapping key {key!r} is not a valid regular expression ({error}); it matches that exact name only",
            stacklevel=4,
        )
        return None


def _checked_replacement(key: str, replacement) -> type[nn.Module]:
    if isinstance(replacement, type) and issubclass(replacement, nn.Module):
        return replacement
    if isinstance(replacement, type):
        described = (
            f"class {replacement.__name__} (bases {[base.__name__ for base in replacement.__mro__[1:]]})"
        )
    else:
        described = f"{replacement!r}, an instance of {type(replacement).__name__}, not a class"
    raise TypeError(f"replacement for {key!r} must be a subclass of nn.Module, got {described}")


def unregister_patch_mapping(keys: str | Iterable[str]) -> None:
    """Remove registered keys, spelled exactly as registered.

    Raises:
        PatchKeyNotFoundError: (a `KeyError` and a `ValueError`) a key is not registered; none is removed.
    """
    keys = [keys] if isinstance(keys, str) else list(keys)
    with _lock:
        unknown = [key for key in keys if key not in _mapping]
        if unknown:
            raise PatchKeyNotFoundError(
                f"class or pattern {unknown} not found in monkey patch mapping cache. Cannot unregister "
                f"what is not registered; nothing was removed. Registered keys: {list(_mapping)}"
            )
        for key in keys:
            del _mapping[key]


def get_patch_mapping() -> dict[str, type[nn.Module]]:
    """A copy of the registered mapping: key -> replacement class."""
    with _lock:
        return {key: replacement for key, (_, replacement) in _mapping.items()}


def clear_patch_mapping() -> None:
    """Remove every registered replacement."""
    with _lock:
        _mapping.clear()


class PatchRules:
    """A snapshot of the registry, so one patching pass sees one consistent mapping."""

    def __init__(self, entries: dict[str, tuple[re.Pattern | None, type[nn.Module]]]):
        self._entries = entries

    def __bool__(self) -> bool:
        return bool(self._entries)

    def replacement_for(self, name: str) -> type[nn.Module] | None:
        """The exact key's replacement if registered, else the first pattern's that `re.search`-matches."""
        if name in self._entries:
            return self._entries[name][1]
        for pattern, replacement in self._entries.values():
            if pattern is not None and pattern.search(name):
                return replacement
        return None


def current_patch_rules() -> PatchRules:
    """The registry as it is now."""
    with _lock:
        return PatchRules(dict(_mapping))
