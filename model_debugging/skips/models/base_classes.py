"""The names of the library's base classes, which the facts of every model and configuration end at."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from model_debugging.skips.records.library import LibraryClass
    from model_debugging.skips.resolve.library import Library

# The base model class.
BASE_MODEL = "PreTrainedModel"
# The base configuration class: `PreTrainedConfig`, spelled `PretrainedConfig` before transformers 5.
BASE_CONFIGS = frozenset({"PreTrainedConfig", "PretrainedConfig"})


def is_configuration(library: Library, info: LibraryClass) -> bool:
    """Whether ``info`` is a configuration class (the base configuration among its ancestors)."""
    return any(ancestor.name in BASE_CONFIGS for ancestor in library.mro(info))
