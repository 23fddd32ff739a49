"""The values of a tester's configuration (``config.<name>``), and library literals as runtime values."""

from __future__ import annotations

from model_debugging.skips.interp.values import ABSENT, Config, ConfigClass, Method, ModelClass, Unknown
from model_debugging.skips.models.base_classes import BASE_CONFIGS, is_configuration
from model_debugging.skips.models.config.constructor import NOT_RUN, ConstructedConfig
from model_debugging.skips.models.config.kwargs import keeps_keyword
from model_debugging.skips.models.config.post_init_values import NOT_READ, post_init_value
from model_debugging.skips.models.config.sub_configs import sub_config, sub_config_value
from model_debugging.skips.models.test_class.context import KeywordsRest, TestClassFacts
from model_debugging.skips.records.library import (
    ClassName,
    EnvironmentValue,
    MethodValue,
)
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.resolve.library import MISSING, Library


def config_value(
    facts: TestClassFacts,
    config: Config,
    name: str,
    unknown: Unknown,
    missing: object,
    before_post_init: bool = False,
) -> object:
    """A value of the tester's configuration: set by the test, passed by the tester, or the class default.

    The tester's attribute of the same name is taken as what it passes (testers build their
    configuration from their own attributes); a value the configuration's ``__init__`` or
    ``__post_init__`` computes is known only at run time, unless ``post_init_values`` computes it
    (``before_post_init``: the value it starts from).
    """
    for key, value in config.overrides:
        if key == name:
            return missing if value is ABSENT else value  # ABSENT: the test's copy dropped it
    library, info = facts.library, config.info
    if info is None:
        return unknown
    if name == "__class__":
        return ConfigClass(info)
    mro = library.mro(info)
    aliases = library.attribute(info, "attribute_map")
    if isinstance(aliases, dict) and isinstance(aliases.get(name), str):
        name = aliases[name]
    declared = library.attribute(info, name)
    init_default = next(
        (value for ancestor in mro for key, value in ancestor.init_defaults if key == name), MISSING
    )
    computed = not before_post_init and any(
        name in ancestor.assigned_in_init for ancestor in mro if ancestor.name not in BASE_CONFIGS
    )
    if config.sub is not None and is_configuration(library, info):
        if declared is not MISSING and any(name in ancestor.class_vars for ancestor in mro):
            return library_value(library, declared, unknown)  # a ClassVar: no dict the tester passes sets it
        value = sub_config_value(config, declared, init_default, computed, unknown, missing)
        return (
            value
            if value is missing or isinstance(value, Unknown)
            else library_value(library, value, unknown)
        )
    sub_configs = library.attribute(info, "sub_configs")
    is_part = isinstance(sub_configs, dict) and name in sub_configs
    keywords = facts.config_keywords
    read = keywords is not None and (name in keywords or facts.config_rest is KeywordsRest.DEFAULT)
    if not read and facts.config_rest is KeywordsRest.UNKNOWN and not isinstance(declared, MethodValue):
        return unknown  # what a parent get_config that was not read passes
    passed = keywords.get(name, ABSENT) if read else facts.tester_attribute(name)
    if declared is MISSING and init_default is MISSING and not computed and not is_part:
        constructed = _constructed(facts, config, name, unknown)
        if constructed is not ABSENT:
            return constructed
        if passed is ABSENT and is_configuration(library, info):
            return missing  # neither declared nor passed: the attribute does not exist
        if read and passed is not ABSENT and keeps_keyword(library, info, name):
            return passed.existing() if isinstance(passed, Unknown) else passed  # set from kwargs
        return unknown
    if isinstance(declared, MethodValue):
        constructed = _constructed(facts, config, name, unknown)  # a property the constructors set
        return Method(info, name) if constructed is ABSENT else constructed
    if is_part:  # built from what the tester passes
        none_given = read and info is facts.config_class and (passed is ABSENT or passed is None)
        return sub_config(library, info, name, sub_configs[name], passed, unknown, none_given=none_given)
    if computed:
        value = post_init_value(
            library,
            config,
            name,
            lambda owner, key, before: config_value(facts, owner, key, unknown, missing, before),
        )
        if value is not NOT_READ:
            return value
    if passed is not ABSENT:
        return passed.existing() if isinstance(passed, Unknown) else passed  # its code says what it is
    if computed:
        constructed = _constructed(facts, config, name, unknown)
        return unknown.existing() if constructed is ABSENT else constructed
    value = init_default if init_default is not MISSING else declared
    return library_value(library, value, unknown.existing())


def _constructed(facts: TestClassFacts, config: Config, name: str, unknown: Unknown) -> object:
    """What running the configuration's constructors on the tester's keywords sets ``name`` to,
    for a configuration whose base class has a constructor (before dataclass fields: ``self.x =
    kwargs.pop("x", False)``); :data:`ABSENT` when they set nothing of that name, or cannot be run."""
    library, info = facts.library, config.info
    base = next((ancestor for ancestor in library.mro(info) if ancestor.name in BASE_CONFIGS), None)
    if base is None or "__init__" not in base.methods:
        return ABSENT
    key = ("constructed configuration", id(info))
    run = facts.kept.get(key)
    if run is None:
        run = facts.kept[key] = ConstructedConfig(library, info, lambda key: _passed(facts, key))
    value = run.value(name)
    if value is NOT_RUN or value is ABSENT:
        return ABSENT
    if isinstance(value, Unknown):
        return unknown.existing() if value.exists else unknown
    return value


def _passed(facts: TestClassFacts, name: str) -> object:
    """What the tester passes to its configuration for ``name``: a value, an ``Unknown``, or ABSENT."""
    keywords = facts.config_keywords
    read = keywords is not None and (name in keywords or facts.config_rest is KeywordsRest.DEFAULT)
    if not read and facts.config_rest is KeywordsRest.UNKNOWN:
        return Unknown(f"config.{name}")  # what a parent get_config that was not read passes
    return keywords.get(name, ABSENT) if read else facts.tester_attribute(name)


def library_value(library: Library, value: object, unknown: Unknown) -> object:
    """A value the library's sources record (a literal, a class name, a method), as a runtime value."""
    if value is MISSING:
        return unknown
    if isinstance(value, EnvironmentValue):
        return True
    if isinstance(value, NonLiteral):
        return unknown.existing()
    if isinstance(value, ClassName):
        found = library.find(value.name)
        if found is None:
            return unknown.existing()
        return ConfigClass(found) if is_configuration(library, found) else ModelClass(found)
    if isinstance(value, MethodValue):
        return unknown.existing()
    if isinstance(value, dict):
        return {key: library_value(library, item, unknown) for key, item in value.items()}
    return value
