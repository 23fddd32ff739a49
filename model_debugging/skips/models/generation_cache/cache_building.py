"""How a model's forwards treat ``use_cache`` and the cache, as read when its library file was parsed.

Whether ``model(**inputs)`` returns ``past_key_values`` depends on where the model's file builds a
cache (under ``use_cache``, whatever it says, or only for generation), on what its forwards do
with ``use_cache`` (assign it, hand it on, fill it from the configuration, turn it off under ``if``
tests) and on the models it builds from its configuration. The readings are made from the file's
tree when the library is parsed (``skips/parse/library/cache_readings.py``); each answer here is a
fact about the file of the first ``forward`` along the model class's MRO.
"""

from __future__ import annotations

from model_debugging.skips.models.generation_cache.model_outputs import forward_file_reading, forward_reading
from model_debugging.skips.records.cache_readings import CacheGating
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library


def cache_gating(library: Library, info: LibraryClass) -> CacheGating | None:
    """How the forwards of the file defining ``info``'s ``forward`` gate the cache."""
    reading = forward_file_reading(library, info)
    return reading.gating if reading is not None else None


def reads_configured_use_cache(library: Library, info: LibraryClass) -> bool:
    """Whether ``info``'s ``forward`` may take ``use_cache`` from its configuration when given None:
    False only when its decorators are known not to and its body reads no ``.use_cache``."""
    reading = forward_reading(library, info)
    return reading is None or reading.reads_configured_use_cache


def forward_sets_use_cache(library: Library, info: LibraryClass) -> bool:
    """Whether ``info``'s own ``forward`` assigns ``use_cache`` other than from its argument or the
    configuration (outside training-only branches), as :class:`CacheGating`'s ``overridden`` says of
    a whole file: a layer's local ``use_cache = cache_params is not None`` is not the model's."""
    reading = forward_reading(library, info)
    return reading is None or reading.sets_use_cache


def hands_on_use_cache(library: Library, info: LibraryClass) -> bool | None:
    """Whether ``info``'s ``forward`` passes the ``use_cache`` it was given to the calls it makes
    (``use_cache=use_cache``, or ``**kwargs`` holding it when it is no named parameter); None when
    a call is given another value (``use_cache=True``) or the ``forward`` is not read."""
    reading = forward_reading(library, info)
    return reading.hands_on_use_cache if reading is not None else None


def forward_use_cache_default(library: Library, info: LibraryClass) -> object:
    """The literal default of the ``use_cache`` parameter of ``info``'s ``forward`` (None when it has
    none, it is not a literal or the ``forward`` is not read)."""
    reading = forward_reading(library, info)
    return reading.use_cache_default if reading is not None else None


def delegated_parts(library: Library, info: LibraryClass) -> tuple[tuple[str, str], ...] | None:
    """``(auto class, part)`` for each ``Auto*.from_config(config.<part>)`` in the file of ``info``'s
    ``forward``; None when one builds from something else than a part of the configuration."""
    reading = forward_file_reading(library, info)
    return reading.parts if reading is not None else None


def builds_no_cache(library: Library, info: LibraryClass) -> bool:
    """The file of ``info``'s ``forward`` never builds a cache outside generation-only methods and
    imports nothing from another model's file: a forward of its models returns only a cache it was
    given (hybrid models such as Zamba build theirs in ``prepare_inputs_for_generation``)."""
    reading = forward_file_reading(library, info)
    return reading is not None and reading.builds_no_cache
