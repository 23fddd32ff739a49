"""``model.base_model`` on a symbolic instance, as ``PreTrainedModel``'s property computes it.

The property gives the attribute named by the class's ``base_model_prefix`` when the instance has
one, else the instance itself. The attribute is read from what the constructors assign
(:mod:`modules`); a class with its own ``base_model``, a prefix not written as a literal, or an
attribute whose value is not known leaves the answer to the run.
"""

from __future__ import annotations

from model_debugging.skips.interp.values import ABSENT, ModelInstance, Unknown
from model_debugging.skips.models.base_classes import BASE_MODEL
from model_debugging.skips.models.test_class.context import TestClassFacts


def base_model(facts: TestClassFacts, model: ModelInstance, unknown: Unknown) -> object:
    """The instance ``model.base_model`` is, or ``unknown`` (an existing attribute) when only the run knows."""
    library = facts.library
    owner = library.defines(model.info, "base_model")
    prefix = library.attribute(model.info, "base_model_prefix")
    if owner is None or owner.name != BASE_MODEL or not isinstance(prefix, str):
        return unknown.existing()
    found = facts.handlers.attribute_of(facts, model, prefix, unknown, missing=ABSENT) if prefix else ABSENT
    if found is ABSENT:
        return model
    return found if isinstance(found, ModelInstance) else unknown.existing()
