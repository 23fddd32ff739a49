"""The sets ``post_init`` gathers into an instance from the models it holds (``_keep_in_fp32_modules``).

The module tree answers when it can be followed; otherwise the set is empty only when no model the
instance may hold declares one, counting those built only under a condition. A tree that cannot be
bounded leaves the answer to the run, also for a model without sub-configurations: what it builds
may be a model of another type (the parts of its configuration do not bound that).
"""

from __future__ import annotations

from model_debugging.skips.interp.values import ModelInstance, Unknown
from model_debugging.skips.models.pretrained_model import modules
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import MISSING, Library


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
        return unknown.existing()
    if any(
        isinstance(part, ModelInstance) and declares(facts.library, part.info, name) for part in parts[1:]
    ):
        return unknown.existing()
    return own


def declares(library: Library, info: LibraryClass, name: str) -> bool:
    """Whether the class (or a base) sets ``name`` to anything but an empty list or None."""
    value = library.attribute(info, name)
    return (
        value is not None
        and value is not MISSING
        and (not isinstance(value, (list, tuple, set)) or bool(value))
    )
