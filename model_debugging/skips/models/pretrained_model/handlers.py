"""What a model class or a model instance of the library does in a test: its attributes, its
methods, calling it, ``PreTrainedModel`` named in the test's file, ``inspect.signature`` of one of its
methods, and the name a submodule gets from ``named_modules()``.

Registered in :data:`~model_debugging.skips.models.registry.HANDLERS`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.values import (
    UNHANDLED,
    Builtin,
    Config,
    Method,
    ModelClass,
    ModelInstance,
    ModuleName,
    Parameters,
    Returns,
    Unknown,
)
from model_debugging.skips.models.base_classes import BASE_MODEL
from model_debugging.skips.models.config.values import library_value
from model_debugging.skips.models.pretrained_model import held_models, modules
from model_debugging.skips.models.pretrained_model.base_model import base_model
from model_debugging.skips.models.pretrained_model.conversions import conversions
from model_debugging.skips.models.registry import HANDLERS
from model_debugging.skips.models.source_texts import attention_interface_used, experts_interface_used
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.records.library import LibraryClass, MethodValue
from model_debugging.skips.resolve.library import Library

_SAME_INSTANCE = {"to", "eval", "train", "float", "half", "cpu", "requires_grad_"}


@HANDLERS.name
def _base_model_name(facts: TestClassFacts, name: str, unknown: Unknown) -> object:
    """``PreTrainedModel`` named in a common file: the library's class."""
    if name in modules.BASE_MODEL_NAMES and facts.library is not None:
        return modules.base_model_class(facts, name) or unknown
    if name == "get_model_conversion_mapping":
        return Builtin(name)
    return UNHANDLED


@HANDLERS.builtin("get_model_conversion_mapping")
def _conversion_mapping(
    facts: TestClassFacts, name: str, arguments: list[object], unknown: Unknown
) -> object:
    return conversions(facts, arguments[0], unknown) if arguments else unknown


@HANDLERS.builtin("signature")
def _signature(facts: TestClassFacts, name: str, arguments: list[object], unknown: Unknown) -> object:
    """``inspect.signature(function)``: the declared names of a library method."""
    function = arguments[0] if arguments else None
    if isinstance(function, Method):
        names = facts.library.signature(function.info, function.name)
        return unknown if names is None else Parameters(names)
    return unknown


@HANDLERS.comparison
def _module_name_against_empty(
    facts: TestClassFacts, operator: ast.cmpop, left: object, right: object
) -> object:
    """A submodule's name from ``named_modules()`` is never ``""`` (only the instance's own is)."""
    if isinstance(operator, (ast.Eq, ast.NotEq)) and any(
        isinstance(one, ModuleName) and isinstance(other, str) and other == ""
        for one, other in ((left, right), (right, left))
    ):
        return isinstance(operator, ast.NotEq)
    return UNHANDLED


@HANDLERS.attribute(ModelClass, ModelInstance)
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


@HANDLERS.call(ModelClass)
def _instantiated(
    facts: TestClassFacts,
    model_class: ModelClass,
    arguments: list[object],
    keywords: dict[str, object],
    unpacked: Callable[[], list[object]],
    unknown: Unknown,
) -> ModelInstance:
    """``model_class(config)``: an instance with that configuration."""
    config = arguments[0] if arguments and isinstance(arguments[0], Config) else unknown
    return ModelInstance(model_class.info, config)


@HANDLERS.method(ModelClass)
def _class_method(
    facts: TestClassFacts,
    owner: ModelClass,
    name: str,
    arguments: list[object],
    keywords: dict[str, object],
    unknown: Unknown,
) -> object:
    if name == "from_pretrained":
        return modules.from_pretrained(facts, owner, keywords)
    body = _one_expression(facts, owner, name) if not arguments and not keywords else None
    if body is not None:
        return body
    if name == "can_generate" or name in _TEXT_DECIDED:
        decide = can_generate if name == "can_generate" else _TEXT_DECIDED[name]
        verdict = decide(facts.library, owner.info)
        return unknown if verdict is None else verdict
    if name in ("_from_config", "from_config") and arguments:
        return ModelInstance(owner.info, arguments[0])
    return unknown


@HANDLERS.method(ModelInstance)
def _instance_method(
    facts: TestClassFacts,
    owner: ModelInstance,
    name: str,
    arguments: list[object],
    keywords: dict[str, object],
    unknown: Unknown,
) -> object:
    body = _one_expression(facts, owner, name) if not arguments and not keywords else None
    if body is not None:
        return body
    if name in modules.MODULE_METHODS and not arguments:
        return modules.call_module_method(facts, owner, name, unknown)
    if name in _TEXT_DECIDED:  # a class method: the instance answers as its class does
        return _class_method(facts, ModelClass(owner.info), name, arguments, keywords, unknown)
    if name in _SAME_INSTANCE:
        return owner
    return unknown


def _one_expression(facts: TestClassFacts, owner: ModelClass | ModelInstance, name: str) -> Returns | None:
    """A class method of the library that only returns one expression (``_supports_default_dynamic_cache``:
    a flag and the class's name), as the first class of ``owner``'s MRO defining it writes it (the
    library's records keep such methods), with ``cls`` bound to the model's class; None otherwise
    (the methods answered here come first)."""
    if name in ANSWERED_CLASS_METHODS or facts.library is None:
        return None
    defining = facts.library.defines(owner.info, name)
    found = next((entry for entry in defining.class_returns if entry[0] == name), None) if defining else None
    if found is None:
        return None
    _, parameter, source = found
    return Returns(ast.parse(source, mode="eval").body, ((parameter, ModelClass(owner.info)),))


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


def _can_set_attn_implementation(library: Library, info: LibraryClass) -> bool | None:
    """``PreTrainedModel._can_set_attn_implementation``: decided from the text of the class's file."""
    return _decided_from_text(library, info, "_can_set_attn_implementation", attention_interface_used)


def _can_set_experts_implementation(library: Library, info: LibraryClass) -> bool | None:
    """``PreTrainedModel._can_set_experts_implementation``: decided from the text of the class's file."""
    return _decided_from_text(library, info, "_can_set_experts_implementation", experts_interface_used)


# class methods a model class (or an instance, answering as its class) decides from its file's text
_TEXT_DECIDED = {
    "_can_set_attn_implementation": _can_set_attn_implementation,
    "_can_set_experts_implementation": _can_set_experts_implementation,
}

# class methods of the library whose answer the evaluator works out itself (not from their body)
ANSWERED_CLASS_METHODS = frozenset({"can_generate", *_TEXT_DECIDED})
