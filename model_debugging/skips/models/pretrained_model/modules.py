"""``model.modules()``, ``model.named_modules()``, ``model.children()`` and ``model.<attribute>`` on
symbolic model instances.

The instance's module tree comes from :mod:`model_debugging.skips.models.pretrained_model.module_tree`: the models
of the library it holds are known one by one (each with its declared configuration class); the
other modules stand together as :class:`OtherModules`, which is never a model of the library. Its
direct submodules and attributes come from :mod:`model_debugging.skips.models.pretrained_model.instance_attributes`:
a library class's instance is a :class:`ModelInstance` (also when it is not a model), a torch
module a :class:`TorchModule`. ``isinstance(module, ...)`` is answered in
:mod:`model_debugging.skips.models.torch_nn`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.expressions import Evaluator
from model_debugging.skips.interp.outside_tests import no_helper
from model_debugging.skips.interp.truth import known, truth
from model_debugging.skips.interp.values import ABSENT as NOT_SET
from model_debugging.skips.interp.values import Config, ModelClass, ModelInstance, ModuleName, Unknown
from model_debugging.skips.models.base_classes import BASE_CONFIGS, BASE_MODEL, is_configuration
from model_debugging.skips.models.config.sub_configs import sub_config
from model_debugging.skips.models.pretrained_model.embeddings import input_embeddings
from model_debugging.skips.models.pretrained_model.instance_attributes import (
    ABSENT,
    Alternatives,
    Assigned,
    assigned_modules,
    configuration_copies,
    instance_attribute,
)
from model_debugging.skips.models.pretrained_model.model_configs import auto_choice, config_class
from model_debugging.skips.models.pretrained_model.module_tree import (
    built_models,
    decided_models,
    following,
    possible_models,
)
from model_debugging.skips.models.test_class.context import TestClassFacts
from model_debugging.skips.models.torch_nn import OtherModules, TorchModule, is_torch_instance
from model_debugging.skips.records.library import ClassName, LibraryClass

# `sub_configs` declarations that leave a part's class to the dict passed for it.
_OPEN_DECLARATIONS = frozenset({"AutoConfig", *BASE_CONFIGS})
# The names of the common file that stand for the library's base model class.
BASE_MODEL_NAMES = (BASE_MODEL,)


def modules_of(facts: TestClassFacts, model: object, unknown: Unknown) -> object:
    """``model.modules()``: the instance itself, the models it builds, then :class:`OtherModules`."""
    if not isinstance(model, ModelInstance):
        return unknown
    found = _kept_for_instance(facts, "modules", model, lambda: _modules(facts, model))
    return unknown if found is None else found


def _kept_for_instance(
    facts: TestClassFacts, kind: str, model: ModelInstance, compute: Callable[[], object]
) -> object:
    """``compute()`` once per test class for equal instances: the tests of a class build the same
    models from the same configuration again and again. Not kept while a class's tree is followed
    (its guards may cut the answer short) or when the configuration holds unhashable values."""
    key = (kind, id(model.info), _config_key(model.config))
    try:
        found = facts.kept.get(key, _NOT_KEPT)
    except TypeError:
        return compute()
    if found is _NOT_KEPT:
        following_before = following()
        found = compute()
        if not following_before:
            facts.kept[key] = found
    return found


_NOT_KEPT = object()


def _config_key(value: object) -> object:
    """``value`` with each configuration's class by identity: a class holding a dict (its
    ``sub_configs``) cannot be hashed, and comparing classes field by field is slow."""
    if not isinstance(value, Config):
        return value
    overrides = tuple((name, _config_key(item)) for name, item in value.overrides)
    return (Config, id(value.info), overrides, value.sub)


def _modules(facts: TestClassFacts, model: ModelInstance) -> tuple[object, ...] | None:
    library = facts.library
    parts = _auto_parts(facts, model)
    models = built_models(library, model.info, parts)
    if models is None:  # maybe a branch on the configuration, which the run's configuration decides
        models = decided_models(
            library,
            model.info,
            parts,
            lambda info, test: _holds(facts, ModelInstance(info, model.config), test),
        )
    if models is None:
        return None
    parts: list[object] = [model]
    for info in models:
        if info is not model.info:
            parts.append(ModelInstance(info, Config(config_class(library, info))))
    return (*parts, OtherModules())


def named_modules_of(facts: TestClassFacts, model: object, unknown: Unknown) -> object:
    """``model.named_modules()``: :func:`modules_of`, the instance named ``""`` and every other
    module by a :class:`ModuleName`."""
    found = modules_of(facts, model, unknown)
    if not isinstance(found, tuple):
        return found
    return tuple(("" if index == 0 else ModuleName("name"), module) for index, module in enumerate(found))


def possible_models_of(facts: TestClassFacts, model: ModelInstance) -> tuple[LibraryClass, ...] | None:
    """The library's models ``model`` may hold (itself first), also those built only under a
    condition: enough to say that none of them has a property; None when not bounded."""
    return possible_models(facts.library, model.info, _auto_parts(facts, model))


MODULE_METHODS = frozenset({"modules", "named_modules", "children", "named_children", "get_input_embeddings"})


def call_module_method(facts: TestClassFacts, model: ModelInstance, name: str, unknown: Unknown) -> object:
    """``model.<name>()`` for a name of :data:`MODULE_METHODS`."""
    if name == "modules":
        return modules_of(facts, model, unknown)
    if name == "named_modules":
        return named_modules_of(facts, model, unknown)
    if name == "get_input_embeddings":
        return input_embeddings(facts, model, unknown)
    return children_of(facts, model, unknown, named=name == "named_children")


def _auto_parts(facts: TestClassFacts, model: ModelInstance) -> dict[str, LibraryClass]:
    found = _kept_for_instance(facts, "auto parts", model, lambda: _read_auto_parts(facts, model))
    return dict(found)


def _read_auto_parts(facts: TestClassFacts, model: ModelInstance) -> dict[str, LibraryClass]:
    """The classes the run's configuration has for the sub-configurations declared ``AutoConfig``
    (or the base configuration class, which equally leaves the class to the dict passed); the parts
    of a part whose dict was read come under dotted keys (``vlm_config.vision_config``)."""
    parts: dict[str, LibraryClass] = {}
    config = model.config
    for key in _open_parts(facts, config):
        part = facts.handlers.attribute_of(facts, config, key, Unknown(key))
        if not isinstance(part, Config) or part.info is None:
            continue
        parts[key] = part.info
        for inner_key in _open_parts(facts, part) if part.sub == "read" else ():
            inner = _read_part(facts, part, inner_key)
            if inner is not None:
                parts[f"{key}.{inner_key}"] = inner
    return parts


def _open_parts(facts: TestClassFacts, config: object) -> list[str]:
    """The sub-configurations of ``config`` whose class the dict passed for them chooses."""
    declared = (
        facts.library.attribute(config.info, "sub_configs")
        if isinstance(config, Config) and config.info
        else None
    )
    return [
        key
        for key, value in (declared.items() if isinstance(declared, dict) else ())
        if isinstance(value, ClassName) and value.name in _OPEN_DECLARATIONS
    ]


def _read_part(facts: TestClassFacts, config: Config, key: str) -> LibraryClass | None:
    """The class of part ``key`` of a part built from a dict that was read (``config``): what its
    item makes of it, or, left out, what ``__post_init__`` makes of None."""
    items = dict(config.overrides)
    declared = facts.library.attribute(config.info, "sub_configs")[key]
    passed = items.get(key)
    written = passed.source if isinstance(passed, Unknown) else ""
    if written.startswith("self.") and written[5:].isidentifier():  # the tester's attribute, in its dict
        passed = facts.tester_attribute(written[5:])
        if passed is NOT_SET:
            return None
    built = sub_config(
        facts.library, config.info, key, declared, passed, Unknown(key), none_given=passed is None
    )
    return built.info if isinstance(built, Config) else None


def base_model_class(facts: TestClassFacts, name: str) -> object:
    """``PreTrainedModel`` named in the common file, as the library's class."""
    info = facts.library.find(name) if name in BASE_MODEL_NAMES else None
    return None if info is None else ModelClass(info)


def instance_value(facts: TestClassFacts, model: ModelInstance, name: str, unknown: Unknown, missing: object):
    """``model.<name>`` from what the constructors assign: a module they build, ``missing`` when no
    constructor sets it and no class has it, else None (the caller decides from the class)."""
    found = instance_attribute(facts.library, model.info, name)
    if found == ABSENT:
        return missing
    if found is None:
        return None
    found = _chosen(facts, model, found)
    if isinstance(found, Assigned):
        return _built_value(facts, model, found, unknown)
    return unknown.existing()


def children_of(facts: TestClassFacts, model: object, unknown: Unknown, named: bool) -> object:
    """``model.named_children()`` / ``model.children()``: the modules its constructors assign."""
    if not isinstance(model, ModelInstance):
        return unknown
    assigned = assigned_modules(facts.library, model.info)
    if assigned is None:
        return unknown
    chosen = [(name, _chosen(facts, model, value)) for name, value in assigned if not _never_a_module(value)]
    if any(value is None for _, value in chosen):
        return unknown
    children = [
        (name, _built_value(facts, model, value, unknown))
        for name, value in chosen
        if isinstance(value, Assigned) and not _builds_no_module(value.call.callee)
    ]
    if any(
        isinstance(child, Unknown)
        or (isinstance(child, ModelInstance) and not is_torch_instance(facts, child, "Module"))
        for _, child in children
    ):
        return unknown  # a value not known, or of a class not known to be a module
    return [(name, child) if named else child for name, child in children]


def from_pretrained(
    facts: TestClassFacts, model_class: ModelClass, keywords: dict[str, object]
) -> ModelInstance:
    """``model_class.from_pretrained(path, **keywords)`` of a checkpoint the test saved: the tester's
    configuration with the keywords given (``num_labels=42``)."""
    config = Config(facts.config_class)
    for key, value in keywords.items():
        config = config.with_value(key, value)
    return ModelInstance(model_class.info, config)


def _never_a_module(value: object) -> bool:
    """:class:`Alternatives` none of which is a module (``nn.Parameter(...) if c else None``)."""
    return (
        isinstance(value, Alternatives)
        and all(
            not isinstance(choice, Assigned) or _builds_no_module(choice.call.callee)
            for _, choice in value.choices
            if choice is not None
        )
        and None not in (choice for _, choice in value.choices)
    )


def _chosen(facts: TestClassFacts, model: ModelInstance, value: object) -> Assigned | str | None:
    """An attribute's value, of :class:`Alternatives` the one whose condition holds; None: unknown."""
    if not isinstance(value, Alternatives):
        return value
    if len(value.choices) != 2:
        return None
    for condition, choice in value.choices:
        verdict = _holds(facts, model, condition)
        if verdict is None:
            return None
        if verdict:
            return choice
    return None


def _holds(facts: TestClassFacts, model: ModelInstance, condition: str) -> bool | None:
    """Whether a condition on the configuration alone (``config.num_labels > 0``) holds for ``model``."""
    copies = configuration_copies(facts.library, model.info)
    tree = _SelfCopies(copies).visit(ast.parse(condition, mode="eval").body)
    if any(isinstance(node, ast.Name) and node.id != "config" for node in ast.walk(tree)):
        return None  # a name of the constructor (a parameter, a local): not known here
    if any(isinstance(node, ast.Call) for node in ast.walk(tree)):
        return None
    value = Evaluator(facts, no_helper).value(tree, {"config": model.config})
    return truth(value) if known(value) else None


class _SelfCopies(ast.NodeTransformer):
    """``self.num_labels`` -> ``config.num_labels`` where the constructor copied it so."""

    def __init__(self, copies: dict[str, str]):
        self.copies = copies

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:  # noqa: N802 - ast's visitor name
        if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.copies:
            return ast.parse(self.copies[node.attr], mode="eval").body
        return self.generic_visit(node)


def _builds_no_module(callee: str) -> bool:
    """``nn.Parameter(...)``, ``torch.zeros(...)``, ``nn.functional.pad(...)``: a tensor, never a submodule."""
    names = callee.split(".")
    if names[0] == "torch" and len(names) > 1:
        if names[1] != "nn":
            return True
        names = names[1:]
    return names[0] == "nn" and (names[1:] == ["Parameter"] or names[1:2] == ["functional"])


def _built_value(facts: TestClassFacts, model: ModelInstance, assigned: Assigned, unknown: Unknown) -> object:
    """The module ``assigned.call`` builds: a torch module, an instance of a library class, else unknown."""
    library, call = facts.library, assigned.call
    path = library.path_of(assigned.owner) or ""
    names = call.callee.split(".")
    for _ in range(2):  # a module-level alias (`XLayerNorm = nn.LayerNorm`) once
        alias = library.function_calls(path, names[0]) if len(names) == 1 else None
        if alias is None or len(alias) != 1 or library.find(names[0], path) is not None:
            break
        names = alias[0].callee.split(".")
    if names[:2] == ["torch", "nn"]:
        names = names[1:]
    if (
        len(names) == 2
        and names[0] == "nn"
        and library.imported_from(path, "nn") in ("torch", "torch.nn")
        and not _builds_no_module(call.callee)
    ):
        return TorchModule(names[1])
    if names[0].startswith("Auto") and names[1:] == ["from_config"]:
        chosen = auto_choice(library, model.info, names[0], call, _auto_parts(facts, model))
        if chosen is None:
            return unknown.existing()
        return ModelInstance(chosen, Config(config_class(library, chosen)))
    constructed = len(names) == 1 or names[1:] in (["from_config"], ["_from_config"])
    found = library.find(names[0], path) if constructed else None
    if found is None or is_configuration(library, found):
        return unknown.existing()
    config = model.config if call.argument == "config" else Config(config_class(library, found))
    return ModelInstance(found, config)
