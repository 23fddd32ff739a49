"""Attributes and methods of the symbolic values: where the library's facts are consulted."""

from __future__ import annotations

import re
from collections.abc import Callable

from model_debugging.skips.library.base_classes import BASE_CONFIGS, BASE_MODEL
from model_debugging.skips.library.index import MISSING, Library
from model_debugging.skips.library.records import (
    LibraryClass,
    MethodValue,
)
from model_debugging.skips.library.texts import (
    TextMatch,
    attention_interface_used,
    experts_interface_used,
    text_contains,
    text_search,
)
from model_debugging.skips.runtime import environment, held_models, module_types, modules
from model_debugging.skips.runtime.base_model import base_model
from model_debugging.skips.runtime.config_values import config_value, library_value
from model_debugging.skips.runtime.context import ABSENT, TestClassFacts
from model_debugging.skips.runtime.values import (
    AutoMapping,
    Builtin,
    Config,
    ConfigClass,
    Helper,
    Method,
    ModelClass,
    ModelInstance,
    Parameters,
    SourceFile,
    SourceText,
    Tensor,
    Tester,
    TestSelf,
    Unknown,
)

_SAME_INSTANCE = {"to", "eval", "train", "float", "half", "cpu", "requires_grad_"}
_STRING_METHODS = {"lower", "upper", "startswith", "endswith", "strip", "split", "replace"}


def known(value: object) -> bool:
    return not isinstance(value, Unknown)


def truth(value: object) -> bool:
    if isinstance(value, Parameters):
        return bool(value.names)
    return (
        bool(value)
        if isinstance(value, (str, int, float, bool, type(None), tuple, list, dict, set))
        else True
    )


def text(value: object) -> str:
    if isinstance(value, Unknown):  # as the rules write it: the test class's name is filled in per class
        return f"<unevaluated: {value.code}>"
    if isinstance(value, (ModelClass, ModelInstance, ConfigClass)):
        return f"<class '{value.info.name}'>"
    return str(value)


def comparable(value: object) -> bool:
    """Values whose equality is identity of the class they stand for."""
    return isinstance(value, (ModelClass, ConfigClass, str, int, type(None)))


def contains(facts: TestClassFacts, container: object, item: object) -> bool | None:
    """``item in container``, or None when only the run knows."""
    if isinstance(container, Tensor) and type(item) in (int, bool) and item == 0:
        return container.has_zero  # ``0 in mask``: whether the tester's tensor holds a zero
    if not known(item) or not known(container):
        return None
    if isinstance(container, SourceText):
        return text_contains(facts.library, container.path, item) if isinstance(item, str) else None
    if isinstance(container, Parameters):
        return item in container.names if isinstance(item, str) else None
    if isinstance(container, AutoMapping):
        if not isinstance(item, ConfigClass):
            return None
        return _config_in_mapping(facts.library, item.info, container.names)
    if isinstance(container, (list, tuple, set, frozenset, dict, str)):
        if isinstance(container, str) and not isinstance(item, str):
            return None
        if isinstance(item, (ModelClass, ConfigClass)):
            return any(isinstance(entry, type(item)) and entry.info is item.info for entry in container)
        return item in container
    return None


def _config_in_mapping(library: Library, config: LibraryClass, mapping: str) -> bool | None:
    """Whether an auto mapping keyed by configuration classes has ``config`` (by its model type)."""
    config_names = library.mappings.get("CONFIG_MAPPING_NAMES")
    keys = library.mapping_keys(mapping)
    if config_names is None or keys is None:
        return None
    model_types = [key for key, names in config_names if config.name in names]
    return any(model_type in keys for model_type in model_types)


def source_file(facts: TestClassFacts, target: object, unknown: Unknown) -> object:
    """``inspect.getfile(cls)`` (the file defining a library class) or ``open(<that file>)``."""
    if isinstance(target, SourceFile):
        return target
    if isinstance(target, (ModelClass, ConfigClass)):
        path = facts.library.path_of(target.info)
        return unknown if path is None else SourceFile(path)
    return unknown


def _can_set_attn_implementation(library: Library, info: LibraryClass) -> bool | None:
    """``PreTrainedModel._can_set_attn_implementation``: decided from the text of the class's file."""
    return _decided_from_text(library, info, "_can_set_attn_implementation", attention_interface_used)


def _can_set_experts_implementation(library: Library, info: LibraryClass) -> bool | None:
    """``PreTrainedModel._can_set_experts_implementation``: decided from the text of the class's file."""
    return _decided_from_text(library, info, "_can_set_experts_implementation", experts_interface_used)


def _decided_from_text(
    library: Library,
    info: LibraryClass,
    method: str,
    rule: Callable[[Library, LibraryClass, str], bool | None],
) -> bool | None:
    """The base model's class method ``method``, which reads the file defining the class; None when
    another class of the MRO overrides it."""
    owner = library.defines(info, method)
    path = library.path_of(info)
    if owner is None or owner.name != BASE_MODEL or not path:
        return None
    return rule(library, owner, path)


# class methods a model class (or an instance, answering as its class) decides from its file's text
_TEXT_DECIDED = {
    "_can_set_attn_implementation": _can_set_attn_implementation,
    "_can_set_experts_implementation": _can_set_experts_implementation,
}
# class methods of the library whose answer the evaluator works out itself (not from their body)
ANSWERED_CLASS_METHODS = frozenset({"can_generate", *_TEXT_DECIDED})


def search_text(facts: TestClassFacts, arguments: list[object], unknown: Unknown) -> object:
    """``re.search(pattern, text[, flags])`` on a library file's text: the match, None, or unknown."""
    pattern, text, flags = (*arguments[:3], 0)[:3]
    if not (isinstance(pattern, str) and isinstance(text, SourceText) and isinstance(flags, int)):
        return unknown
    found = text_search(facts.library, text.path, pattern, int(flags))
    return found.match if found.readable else unknown


def parameters(facts: TestClassFacts, function: object, unknown: Unknown) -> object:
    """``inspect.signature(function)``: the declared names of a library method."""
    if isinstance(function, Method):
        names = facts.library.signature(function.info, function.name)
        return unknown if names is None else Parameters(names)
    return unknown


def attribute(
    facts: TestClassFacts, owner: object, name: str, unknown: Unknown, missing: object = None
) -> object:
    """``owner.name``; ``missing`` is returned when the attribute surely does not exist (else Unknown)."""
    missing = unknown if missing is None else missing
    if isinstance(owner, Tensor) and name == "ndim" and owner.dims is not None:
        return len(owner.dims)
    if isinstance(owner, TestSelf):
        return _test_attribute(facts, name, unknown, missing)
    if isinstance(owner, Tester):
        value = facts.tester_attribute(name)
        return missing if value is ABSENT else _named_model_class(facts.library, value)
    if isinstance(owner, (ModelClass, ModelInstance)):
        return _model_attribute(facts, owner, name, unknown, missing)
    if owner is None or isinstance(owner, (bool, int, float, str)):
        return unknown.existing() if hasattr(owner, name) else missing
    if isinstance(owner, (environment.Namespace, environment.Release)):
        found = environment.attribute(owner, name)
        if found is None and owner == environment.TORCH:
            found = module_types.torch_package_attribute(name)
        return unknown if found is None else found
    if isinstance(owner, (module_types.TorchNamespace, module_types.TorchModule, module_types.TorchClass)):
        return module_types.torch_attribute(owner, name, unknown)
    if isinstance(owner, Config):
        return config_value(facts, owner, name, unknown, missing)
    if isinstance(owner, ConfigClass):
        if name == "__name__":
            return owner.info.name
        return library_value(facts.library, facts.library.attribute(owner.info, name), unknown)
    if isinstance(owner, Parameters) and name == "parameters":
        return owner
    if isinstance(owner, Builtin) and owner.name == "inspect" and name in ("signature", "getfile"):
        return Builtin(name)
    if isinstance(owner, Builtin) and owner.name == "re":
        return Builtin(name) if name == "search" else getattr(re, name, unknown)
    return unknown


def _named_model_class(library: Library, value: object) -> object:
    """A tester attribute naming a model class of the library (``token_classification_class =
    T5GemmaForTokenClassification``, set under ``if is_torch_available():``) is that class."""
    name = value.source if isinstance(value, Unknown) else ""
    info = library.find(name) if name.isidentifier() else None
    if info is None or not any(ancestor.name == BASE_MODEL for ancestor in library.mro(info)):
        return value
    return ModelClass(info)


def _test_attribute(facts: TestClassFacts, name: str, unknown: Unknown, missing: object) -> object:
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


def _model_attribute(
    facts: TestClassFacts, owner: ModelClass | ModelInstance, name: str, unknown: Unknown, missing: object
) -> object:
    library, info = facts.library, owner.info
    if name == "__name__":
        return info.name
    value = library.attribute(info, name)
    if isinstance(owner, ModelInstance):
        if name == "config":
            return owner.config
        if name == "__class__":
            return ModelClass(info)
        if name == "base_model":
            return base_model(facts, owner, unknown)
        as_set, assigned = library.instance_names(info)
        if name in as_set and isinstance(value, (list, tuple, set, type(None))):
            return held_models.gathered_set(facts, owner, name, set(value or ()), unknown)
        found = modules.instance_value(facts, owner, name, unknown, missing)
        if found is not None:
            return found
        if name in assigned:
            return unknown.existing()
    if isinstance(value, MethodValue):
        return Method(info, name)
    return library_value(library, value, unknown)


def can_generate(library: Library, info: LibraryClass) -> bool | None:
    """``PreTrainedModel.can_generate``: a base named ``*GenerationMixin*`` (its own, like Whisper's,
    may sit in a file the index does not read), a generating base, or its own
    ``prepare_inputs_for_generation``; None when a class of the MRO overrides ``can_generate``."""
    owner = library.defines(info, "can_generate")
    if owner is not None and owner.name != BASE_MODEL:
        return None
    if any("GenerationMixin" in base for base in info.bases):
        return True
    for base_name in info.bases:
        base = library.find(base_name)
        if base is not None and "PreTrainedModel" not in base.name and can_generate(library, base):
            return True
    return library.defines(info, "prepare_inputs_for_generation") is not None


def call_method(
    facts: TestClassFacts,
    owner: object,
    name: str,
    arguments: list[object],
    unknown: Unknown,
    keywords: dict[str, object] | None = None,
) -> object:
    """``owner.name(*arguments, **keywords)`` for the methods whose result the library's sources
    decide (keywords are read only by the tester's methods)."""
    if (
        isinstance(owner, str)
        and name in _STRING_METHODS
        and all(isinstance(item, str) for item in arguments)
    ):
        return getattr(owner, name)(*arguments)
    if isinstance(owner, dict) and name in ("keys", "values", "items") and not arguments:
        return list(getattr(owner, name)())
    if isinstance(owner, dict) and name == "get" and arguments and isinstance(arguments[0], (str, int)):
        return owner.get(arguments[0], arguments[1] if len(arguments) > 1 else None)
    if isinstance(owner, Parameters) and name == "keys":
        return owner
    if isinstance(owner, Tester):
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
    if isinstance(owner, ModelInstance) and name in modules.MODULE_METHODS and not arguments:
        return modules.call_module_method(facts, owner, name, unknown)
    if isinstance(owner, ModelInstance) and name in _TEXT_DECIDED:
        owner = ModelClass(owner.info)  # a class method: the instance answers as its class does
    if isinstance(owner, set) and name == "union":
        items = [
            item for argument in arguments if isinstance(argument, (list, tuple, set)) for item in argument
        ]
        if len(items) < sum(len(argument) for argument in arguments) or not all(
            known(item) for item in items
        ):
            return unknown
        return owner.union(items)
    if isinstance(owner, ModelClass):
        if name == "can_generate" or name in _TEXT_DECIDED:
            decide = can_generate if name == "can_generate" else _TEXT_DECIDED[name]
            verdict = decide(facts.library, owner.info)
            return unknown if verdict is None else verdict
        if name in ("_from_config", "from_config") and arguments:
            return ModelInstance(owner.info, arguments[0])
        return unknown
    if isinstance(owner, SourceFile) and name == "read":
        return SourceText(owner.path)
    if isinstance(owner, TextMatch) and name == "group" and all(isinstance(item, int) for item in arguments):
        return owner.group(*arguments)
    if isinstance(owner, ModelInstance) and name in _SAME_INSTANCE:
        return owner
    if isinstance(owner, Config) and name == "get_text_config":
        return _text_config(facts.library, owner, unknown)
    return unknown


def _text_config(library: Library, config: Config, unknown: Unknown) -> object:
    """``config.get_text_config()`` is the configuration itself when it has no sub-configurations."""
    if config.info is None:
        return unknown
    owner = library.defines(config.info, "get_text_config")
    sub_configs = library.attribute(config.info, "sub_configs")
    if (owner is None or owner.name in BASE_CONFIGS) and sub_configs in ({}, MISSING):
        return config
    return unknown
