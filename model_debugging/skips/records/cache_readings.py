"""What a modeling file's forwards do with ``use_cache`` and the cache, read when the library file
is parsed (``skips/parse/library/cache_readings.py``) and kept in its record: the evaluation asks
whether ``model(**inputs)`` returns ``past_key_values`` without parsing the file again."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class CacheGating:
    """How a modeling file's forwards treat ``use_cache``.

    ``gated``: some forward builds a cache only when ``use_cache`` is true (``if use_cache and
    past_key_values is None: past_key_values = DynamicCache(...)``); ``ungated``: some forward builds
    one whatever ``use_cache`` is; ``overridden``: some forward assigns ``use_cache`` other than from
    its argument or the configuration (outside training-only branches); ``delegated``: the file
    builds a model from a sub-configuration (``AutoModel.from_config``), whose cache is elsewhere.
    """

    gated: bool
    ungated: bool
    overridden: bool
    delegated: bool
    # ``use_cache = False`` (under ``if`` tests): (class whose forward does it, the tests that must hold)
    disabled: tuple[tuple[str, tuple[ast.expr, ...]], ...] = ()

    @property
    def follows_use_cache(self) -> bool:
        """The returned cache exists exactly when ``use_cache`` is true."""
        return self.gated and not (self.ungated or self.overridden or self.delegated)


@dataclass(frozen=True)
class ForwardReading:
    """What the evaluation reads of a class's own ``forward`` (the first it defines, when the class
    is written at the top of its module)."""

    # the names its return annotation writes (``-> tuple | BaseModelOutputWithPast``); None: it has
    # none, or a string one that does not parse
    output_names: tuple[str, ...] | None
    use_cache_default: object  # the literal default of its ``use_cache`` parameter; None: none
    # it may take ``use_cache`` from the configuration when given None (a decorator not known not
    # to, or a ``.use_cache`` read)
    reads_configured_use_cache: bool
    sets_use_cache: bool  # it assigns ``use_cache`` other than from its argument or the configuration
    # it passes the ``use_cache`` it was given on (``use_cache=use_cache``, or ``**kwargs`` holding
    # it); None: a call is given another value
    hands_on_use_cache: bool | None


@dataclass(frozen=True)
class FileCacheReading:
    """What the evaluation reads of a whole modeling file: how its forwards gate the cache, the
    parts it builds with ``Auto*.from_config(config.<part>)`` (None: one built from something else),
    and whether it builds no cache outside generation-only methods and imports no other model."""

    gating: CacheGating
    parts: tuple[tuple[str, str], ...] | None
    builds_no_cache: bool
