"""What a configuration and a configuration class do in a test: attributes, ``get_text_config()``
and ``to_dict()``, and whether an auto mapping keyed by configuration classes holds one.

Registered in :data:`~model_debugging.skips.models.registry.HANDLERS`.
"""

from __future__ import annotations

from model_debugging.skips.interp.values import AutoMapping, Config, ConfigClass, Unknown
from model_debugging.skips.models.base_classes import BASE_CONFIGS
from model_debugging.skips.models.config.methods import CONFIG_METHODS, call_config_method
from model_debugging.skips.models.config.values import config_value, library_value
from model_debugging.skips.models.registry import HANDLERS
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.resolve.library import MISSING, Library


@HANDLERS.attribute(Config)
def _config_attribute(
    facts: TestClassFacts, owner: Config, name: str, unknown: Unknown, missing: object
) -> object:
    return config_value(facts, owner, name, unknown, missing)


@HANDLERS.attribute(ConfigClass)
def _config_class_attribute(
    facts: TestClassFacts, owner: ConfigClass, name: str, unknown: Unknown, missing: object
) -> object:
    if name == "__name__":
        return owner.info.name
    return library_value(facts.library, facts.library.attribute(owner.info, name), unknown)


@HANDLERS.method(Config)
def _config_method(
    facts: TestClassFacts,
    owner: Config,
    name: str,
    arguments: list[object],
    keywords: dict[str, object],
    unknown: Unknown,
) -> object:
    if name in CONFIG_METHODS and not arguments:
        return call_config_method(facts, owner, name, keywords, unknown)
    if name == "get_text_config":
        return _text_config(facts.library, owner, unknown)
    return unknown


@HANDLERS.contains(AutoMapping)
def _in_auto_mapping(facts: TestClassFacts, container: AutoMapping, item: object) -> bool | None:
    """``config.__class__ in MODEL_MAPPING``."""
    if not isinstance(item, ConfigClass):
        return None
    return facts.library.fact(_config_in_mapping, item.info.name, container.names)


def _config_in_mapping(library: Library, config: str, mapping: str) -> bool | None:
    """Whether an auto mapping keyed by configuration classes has the configuration class ``config``
    (by its model type). A fact: a new entry of either mapping evaluates again only the models for
    which the answer changes."""
    config_names = library.mappings.get("CONFIG_MAPPING_NAMES")
    keys = library.mapping_keys(mapping)
    if config_names is None or keys is None:
        return None
    model_types = [key for key, names in config_names if config in names]
    return any(model_type in keys for model_type in model_types)


def _text_config(library: Library, config: Config, unknown: Unknown) -> object:
    """``config.get_text_config()`` is the configuration itself when it has no sub-configurations."""
    if config.info is None:
        return unknown
    owner = library.defines(config.info, "get_text_config")
    sub_configs = library.attribute(config.info, "sub_configs")
    if (owner is None or owner.name in BASE_CONFIGS) and sub_configs in ({}, MISSING):
        return config
    return unknown
