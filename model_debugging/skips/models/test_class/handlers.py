"""What ``self`` and ``self.model_tester`` of a collected test class give in a test, and the
module-level names of the common files the test class brings (the auto mappings imported there,
``get_values`` over them, the model classes a model's test file imports).

Registered in :data:`~model_debugging.skips.models.registry.HANDLERS`.
"""

from __future__ import annotations

from model_debugging.skips.interp.values import (
    ABSENT,
    UNHANDLED,
    Builtin,
    Config,
    Helper,
    ModelClass,
    Tester,
    TestSelf,
    Unknown,
)
from model_debugging.skips.models.base_classes import BASE_MODEL
from model_debugging.skips.models.pretrained_model.handlers import can_generate
from model_debugging.skips.models.registry import HANDLERS
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.models.test_class.facts import auto_mapping
from model_debugging.skips.resolve.library import Library


@HANDLERS.name
def _common_file_name(facts: TestClassFacts, name: str, unknown: Unknown) -> object:
    """An auto mapping (``MODEL_MAPPING``, ``X_NAMES``) or a model class imported in the files of the
    test class; ``get_values`` of ``transformers.models.auto``."""
    mapping = auto_mapping(facts.library, name)
    if mapping is not None:
        return mapping
    if name in facts.names:
        return facts.names[name]
    return Builtin(name) if name == "get_values" else UNHANDLED


@HANDLERS.builtin("get_values")
def _mapping_values(facts: TestClassFacts, name: str, arguments: list[object], unknown: Unknown) -> object:
    """``get_values(mapping)``'s items, kept per test class with the mapping (an auto mapping's
    hundreds of names are flattened for every model class a test loops over)."""
    if not arguments or not isinstance(arguments[0], dict):
        return unknown
    mapping = arguments[0]
    key = ("get_values", id(mapping))
    found = facts.kept.get(key)
    if found is None or found[0] is not mapping:
        values = tuple(
            item for items in mapping.values() for item in (items if isinstance(items, tuple) else (items,))
        )
        found = facts.kept[key] = (mapping, values)
    return list(found[1])


@HANDLERS.attribute(TestSelf)
def _test_attribute(
    facts: TestClassFacts, owner: TestSelf, name: str, unknown: Unknown, missing: object
) -> object:
    if name == "model_tester":
        return Tester()
    if name == "all_model_classes" and facts.model_classes is not None:
        return tuple(ModelClass(info) for info in facts.model_classes)
    if name == "all_generative_model_classes":
        classes = facts.generative_classes
        if classes is None and isinstance(facts.attribute(name), Unknown):
            return unknown  # the test class declares them in a way the analyzer cannot read
        if classes is None and facts.model_classes is not None:
            verdicts = [can_generate(facts.library, info) for info in facts.model_classes]
            if None in verdicts:
                return unknown
            classes = tuple(
                info for info, verdict in zip(facts.model_classes, verdicts, strict=True) if verdict
            )
        return unknown if classes is None else tuple(ModelClass(info) for info in classes)
    if name == "skipTest":
        return Helper(name)
    value = facts.attribute(name)
    return missing if value is ABSENT else _named_model_class(facts.library, value)


@HANDLERS.attribute(Tester)
def _tester_attribute(
    facts: TestClassFacts, owner: Tester, name: str, unknown: Unknown, missing: object
) -> object:
    value = facts.tester_attribute(name)
    return missing if value is ABSENT else _named_model_class(facts.library, value)


@HANDLERS.method(Tester)
def _tester_method(
    facts: TestClassFacts,
    owner: Tester,
    name: str,
    arguments: list[object],
    keywords: dict[str, object],
    unknown: Unknown,
) -> object:
    """``get_config()``, ``prepare_config_and_inputs_for_common()`` and the tester's other methods
    that return a (configuration, inputs) pair, run on the tester's source."""
    if name == "get_config":
        return Config(facts.config_class)
    if name == "prepare_config_and_inputs_for_common":
        inputs, changed = facts.common_inputs, facts.common_config
    elif facts.tester_call is not None and (called := facts.tester_call(name, arguments, keywords or {})):
        # another method of the tester: only a configuration get_config() built is known
        inputs, changed = called.inputs, called.config if called.passed is None else None
    else:
        return unknown
    config = Unknown("config") if changed is None else Config(facts.config_class, changed)
    return (config, Unknown("inputs_dict") if inputs is None else dict(inputs))


def _named_model_class(library: Library, value: object) -> object:
    """A tester attribute naming a model class of the library (``token_classification_class =
    T5GemmaForTokenClassification``, set under ``if is_torch_available():``) is that class."""
    name = value.source if isinstance(value, Unknown) else ""
    info = library.find(name) if name.isidentifier() else None
    if info is None or not any(ancestor.name == BASE_MODEL for ancestor in library.mro(info)):
        return value
    return ModelClass(info)
