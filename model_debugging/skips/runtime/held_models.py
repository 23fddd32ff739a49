"""The sets ``post_init`` gathers into an instance from the models it holds (``_keep_in_fp32_modules``).

The module tree answers when it can be followed; the set is also empty when no model the
instance may hold declares one, counting those built only under a condition. Otherwise a model
holds models of another type only through the parts of its configuration (``sub_configs``): each
part is answered for by the base model of its type (``MODEL_MAPPING_NAMES``, whose class carries
what its family declares), then by that part's own parts.
"""

from __future__ import annotations

from model_debugging.skips.library.index import MISSING, Library
from model_debugging.skips.library.records import LibraryClass
from model_debugging.skips.runtime import modules
from model_debugging.skips.runtime.context import TestClassFacts
from model_debugging.skips.runtime.values import Config, ModelInstance, Unknown

# Parts of parts of parts: deeper configurations are not followed (then: may declare).
_DEPTH = 3


def gathered_set(
    facts: TestClassFacts, model: ModelInstance, name: str, own: set, unknown: Unknown
) -> object:
    """The instance's set (its class's ``own`` values and its held models'): empty only when theirs
    surely are, else unknown (the common tests only ask whether it is empty)."""
    parts = modules.modules_of(facts, model, unknown) if not own else ()
    if not isinstance(parts, tuple):
        possible = modules.possible_models_of(facts, model)
        if possible is not None and not any(declares(facts.library, info, name) for info in possible[1:]):
            return own
        return own if parts_declare_none(facts, model.config, name) else unknown.existing()
    if any(
        isinstance(part, ModelInstance) and declares(facts.library, part.info, name) for part in parts[1:]
    ):
        return unknown.existing()
    return own


def parts_declare_none(facts: TestClassFacts, config: object, name: str, depth: int = _DEPTH) -> bool:
    """True when no model built from a part of ``config`` (or from their parts) declares ``name``."""
    from model_debugging.skips.runtime.attributes import attribute  # attributes imports this module

    info = config.info if isinstance(config, Config) else None
    declared = facts.library.attribute(info, "sub_configs") if info is not None else None
    if declared in ({}, MISSING):
        return True
    if not isinstance(declared, dict) or depth == 0:
        return False
    for key in declared:
        part = attribute(facts, config, key, Unknown(key))
        base = _base_model(facts.library, part.info) if isinstance(part, Config) and part.info else None
        if base is None or declares(facts.library, base, name):
            return False
        if not parts_declare_none(facts, part, name, depth - 1):
            return False
    return True


def declares(library: Library, info: LibraryClass, name: str) -> bool:
    """Whether the class (or a base) sets ``name`` to anything but an empty list or None."""
    value = library.attribute(info, name)
    return (
        value is not None
        and value is not MISSING
        and (not isinstance(value, (list, tuple, set)) or bool(value))
    )


def _base_model(library: Library, config: LibraryClass) -> LibraryClass | None:
    model_type = library.attribute(config, "model_type")
    entries = library.mappings.get("MODEL_MAPPING_NAMES")
    names = dict(entries).get(model_type) if isinstance(model_type, str) and entries is not None else None
    return library.find(names[0]) if names else None
