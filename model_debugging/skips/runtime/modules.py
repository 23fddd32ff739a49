"""``model.modules()`` and ``isinstance(module, PreTrainedModel)`` on symbolic model instances.

The instance's module tree comes from :mod:`model_debugging.skips.library.module_tree`: the models
of the library it holds are known one by one (each with its declared configuration class); the
other modules stand together as :class:`OtherModules`, which is never a model of the library.
"""

from __future__ import annotations

from dataclasses import dataclass

from model_debugging.skips.library.module_tree import built_models, config_class, is_model
from model_debugging.skips.library.records import ClassName, LibraryClass
from model_debugging.skips.runtime.context import TestClassFacts
from model_debugging.skips.runtime.values import Config, ModelClass, ModelInstance, Unknown

# The names of the common file that stand for the library's base model class.
BASE_MODEL_NAMES = ("PreTrainedModel",)


@dataclass(frozen=True)
class OtherModules:
    """Every module of an instance that is not a model of the library (layers, torch modules)."""


def modules_of(facts: TestClassFacts, model: object, unknown: Unknown) -> object:
    """``model.modules()``: the instance itself, the models it builds, then :class:`OtherModules`."""
    if not isinstance(model, ModelInstance):
        return unknown
    library = facts.library
    models = built_models(library, model.info, _auto_parts(facts, model))
    if models is None:
        return unknown
    parts: list[object] = [model]
    for info in models:
        if info is not model.info:
            parts.append(ModelInstance(info, Config(config_class(library, info))))
    return (*parts, OtherModules())


def _auto_parts(facts: TestClassFacts, model: ModelInstance) -> dict[str, LibraryClass]:
    """The classes the run's configuration has for the sub-configurations declared ``AutoConfig``."""
    from model_debugging.skips.runtime.attributes import attribute  # attributes imports this module

    config = model.config
    declared = (
        facts.library.attribute(config.info, "sub_configs")
        if isinstance(config, Config) and config.info
        else None
    )
    parts: dict[str, LibraryClass] = {}
    for key, value in declared.items() if isinstance(declared, dict) else ():
        if isinstance(value, ClassName) and value.name == "AutoConfig":
            part = attribute(facts, config, key, Unknown(key))
            if isinstance(part, Config) and part.info is not None:
                parts[key] = part.info
    return parts


def base_model_class(facts: TestClassFacts, name: str) -> object:
    """``PreTrainedModel`` named in the common file, as the library's class."""
    info = facts.library.find(name) if name in BASE_MODEL_NAMES else None
    return None if info is None else ModelClass(info)


def is_instance(facts: TestClassFacts, value: object, kind: object) -> bool | None:
    """``isinstance(value, kind)`` for a module and a class of the library, or None."""
    if not isinstance(kind, ModelClass):
        return None
    if isinstance(value, OtherModules):
        return False if is_model(facts.library, kind.info) else None
    if isinstance(value, ModelInstance):
        return kind.info in facts.library.mro(value.info)
    return None
