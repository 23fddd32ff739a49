"""Build a :class:`TestClassFacts` for a collected test class from the analyzer's resolver."""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.values import ABSENT, AutoMapping, Helper, Unknown
from model_debugging.skips.models import environment
from model_debugging.skips.models.test_class.context import KeywordsRest, TestClassFacts
from model_debugging.skips.models.test_class.imported_names import imported_models
from model_debugging.skips.models.test_class.overrides import MODEL_FILES, HelperOverrides
from model_debugging.skips.models.tester.config import config_keywords, mutated_attributes
from model_debugging.skips.models.tester.held_testers import (
    definitions_along,
    held_tester_method,
    method_along,
)
from model_debugging.skips.models.tester.inputs import (
    UNREAD,
    TesterCommon,
    common_inputs,
    tester_method_result,
)
from model_debugging.skips.models.tester.parent_config import followed_keywords, passes_tester_attributes
from model_debugging.skips.models.tester.parts import built_parts
from model_debugging.skips.records.library import ClassName, LibraryClass
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.resolve.classes import _MISSING, ClassRef, Resolver
from model_debugging.skips.resolve.library import Library

# Testers that list their model classes from one base class by naming convention
# (tests/causal_lm_tester.py, tests/vlm_tester.py): tester attribute -> name suffix, in list order.
_CONVENTIONAL_CLASSES = {
    "CausalLMModelTester": (
        ("base_model_class", ""),
        ("causal_lm_class", "ForCausalLM"),
        ("question_answering_class", "ForQuestionAnswering"),
        ("sequence_classification_class", "ForSequenceClassification"),
        ("token_classification_class", "ForTokenClassification"),
    ),
    "VLMModelTester": (
        ("base_model_class", ""),
        ("conditional_generation_class", "ForConditionalGeneration"),
        ("sequence_classification_class", None),
    ),
}


def auto_mapping(library: Library, name: str) -> object | None:
    """The auto mapping a common file imports as ``name``: ``X_NAMES`` as a dict, ``X`` as an
    :class:`AutoMapping`; None when the library has none of that name. What it reads is the mapping
    asked for (and the names looked up), in the reads of the evaluation that asks: a new entry of
    another mapping evaluates it not again."""
    return library.memoized(("auto mapping", name), lambda: _auto_mapping(library, name))


def _auto_mapping(library: Library, name: str) -> object | None:
    entries = library.mappings.get(name) if name.endswith("_NAMES") else None
    if entries is not None:
        return {key: classes if len(classes) != 1 else classes[0] for key, classes in entries}
    return AutoMapping(f"{name}_NAMES") if f"{name}_NAMES" in library.mappings else None


def class_facts(
    resolver: Resolver,
    name: str,
    linearization: tuple[ClassRef, ...],
    library: Library,
    definition: Callable[[str], ast.FunctionDef | None],
    sources: Callable[[str], ast.Module | None],
) -> TestClassFacts:
    """What the common tests may consult about the test class ``name`` (its MRO is ``linearization``)."""

    attributes: dict[str, object] = {}
    tester_attributes: dict[str, object] = {}

    def attribute(key: str) -> object:
        if key not in attributes:
            attributes[key] = _attribute(key)
        return attributes[key]

    def tester_attribute(key: str) -> object:
        if key not in tester_attributes:
            tester_attributes[key] = _tester_attribute(key)
        return tester_attributes[key]

    def _attribute(key: str) -> object:
        value, owner = resolver.class_attribute(linearization, key)
        if value is _MISSING:
            return ABSENT
        if isinstance(value, NonLiteral):
            return (
                Helper(key)
                if value.code.endswith(f".{key}()")
                else Unknown(_installed(value.code), exists=True)
            )
        return value

    def _tester_attribute(key: str) -> object:
        value = resolver.tester_attribute(linearization, key)
        if value is _MISSING:
            return ABSENT
        if isinstance(value, NonLiteral):
            return Unknown(value.code, exists=True)
        return value

    model_classes = _model_classes(resolver, linearization, library)
    generative = None
    value, _ = resolver.class_attribute(linearization, "all_generative_model_classes")
    # A method of that name (the mixin's property) is reported as `Owner.all_generative_model_classes()`.
    if isinstance(value, NonLiteral) and not value.code.endswith(".all_generative_model_classes()"):
        generative = _classes_in(value.code, library)
    elif isinstance(value, tuple | list) and not value:  # `= ()`: the class runs no generation loop
        generative = ()
    config_class = _config_class(resolver, linearization, library, model_classes)
    tester = _tester_classes(resolver, linearization, sources)
    tester_ref, constructed_with = resolver.tester_class(linearization)
    keywords, rest = followed_keywords(
        definitions_along(resolver, tester_ref, sources, "get_config")
        if tester_ref is not None and not tester_ref.external
        else [],
        lambda function: config_keywords(
            function,
            tester_attribute,
            lambda method: _tester_method(resolver, linearization, sources, method, tester_attribute),
            constructed_with,
            mutated_attributes(tester[0]) if tester is not None else None,
        ),
    )
    definers = [(path, ref.name) for ref in linearization if (path := resolver.path_of(ref)) is not None]
    overrides = HelperOverrides(definers, sources)
    # the model files' imports are names of the overrides written there; the common file's win
    model_files = sorted({path for path, _ in definers if MODEL_FILES in path})
    imported = imported_models(library, [tree for path in model_files if (tree := sources(path))])

    def own_definition(key: str) -> ast.FunctionDef | None:
        return definition(key) or overrides.own(key)

    passed_names = _passed_config_names(resolver, linearization, sources, tester_attribute, keywords, rest)
    common = _common_inputs(tester, tester_attribute, config_class)
    if passed_names is None and _tester_method(resolver, linearization, sources, "get_config") is None:
        passed_names = common.passed  # the configuration is built where the inputs are
    return TestClassFacts(
        library,
        name,
        attribute,
        _with_parts(tester, tester_attribute),
        own_definition,
        model_classes,
        generative,
        config_class,
        imported,
        keywords,
        common.inputs,
        passed_names,
        overrides.parent,
        common.config,
        _tester_call(tester, tester_attribute, config_class),
        rest,
    )


def _passed_config_names(
    resolver: Resolver,
    linearization: tuple[ClassRef, ...],
    sources: Callable[[str], ast.Module | None],
    tester_attribute: Callable[[str], object],
    keywords: dict[str, object] | None,
    rest: KeywordsRest,
) -> frozenset[str] | None:
    """The names the tester passes to its configuration that may not be the class's own parameters:
    its ``get_config`` keywords, and the ``forced_config_args`` of a ``get_config`` that passes only
    ``self.config_args + self.forced_config_args`` (``CausalLMModelTester``), also as the parent of
    an override. None when unknown."""
    if rest is KeywordsRest.UNKNOWN:
        return None
    if rest is KeywordsRest.DEFAULT:
        return frozenset(keywords or ())
    # the rest is the conventional loop's: checked by followed_keywords when it read keywords on top
    if keywords is None and not passes_tester_attributes(
        _tester_method(resolver, linearization, sources, "get_config")
    ):
        return None
    forced = tester_attribute("forced_config_args")
    if not isinstance(forced, (list, tuple)) or not all(isinstance(name, str) for name in forced):
        return None
    return frozenset(forced) | frozenset(keywords or ())


def _tester_classes(
    resolver: Resolver, linearization: tuple[ClassRef, ...], sources: Callable[[str], ast.Module | None]
) -> tuple[list[ast.ClassDef], list[dict[str, ast.FunctionDef]]] | None:
    """The classes of the tester's MRO and the module-level functions of their files (None when a
    class cannot be read)."""
    tester, _ = resolver.tester_class(linearization)
    if tester is None or tester.external:
        return None
    classes, functions = [], []
    for ref in resolver.mro(tester):
        path = resolver.path_of(ref)
        tree = sources(path) if path else None
        body = tree.body if tree is not None else []
        node = next((item for item in body if isinstance(item, ast.ClassDef) and item.name == ref.name), None)
        if node is None:
            return None
        classes.append(node)
        functions.append({item.name: item for item in body if isinstance(item, ast.FunctionDef)})
    return classes, functions


def _common_inputs(
    tester: tuple[list[ast.ClassDef], list[dict[str, ast.FunctionDef]]] | None,
    tester_attribute: Callable[[str], object],
    config_class: LibraryClass | None,
) -> TesterCommon:
    """What the tester's ``prepare_config_and_inputs_for_common`` returns (:data:`UNREAD` when a
    class of the tester's MRO cannot be read)."""
    if tester is None:
        return UNREAD
    name = config_class.name if config_class is not None else None
    return common_inputs(tuple(tester[0]), tuple(tester[1]), tester_attribute, name)


def _tester_call(
    tester: tuple[list[ast.ClassDef], list[dict[str, ast.FunctionDef]]] | None,
    tester_attribute: Callable[[str], object],
    config_class: LibraryClass | None,
) -> Callable[[str, list[object], dict[str, object]], TesterCommon | None] | None:
    """``self.model_tester.<method>(...)`` run on the tester's source; the test's values that are not
    literals reach it as unknown."""
    if tester is None:
        return None
    name = config_class.name if config_class is not None else None

    def call(method: str, arguments: list[object], keywords: dict[str, object]) -> TesterCommon | None:
        return tester_method_result(
            tuple(tester[0]),
            tuple(tester[1]),
            tester_attribute,
            name,
            method,
            [_literal_argument(value) for value in arguments],
            {key: _literal_argument(value) for key, value in keywords.items()},
        )

    return call


def _literal_argument(value: object) -> object:
    plain = (bool, int, float, str, type(None))
    return value if isinstance(value, plain) and not isinstance(value, Unknown) else Unknown("argument")


def _with_parts(
    tester: tuple[list[ast.ClassDef], list[dict[str, ast.FunctionDef]]] | None,
    tester_attribute: Callable[[str], object],
) -> Callable[[str], object]:
    """The tester's attributes, and for a part ``get_config`` builds with a method of its own
    (``kwargs["text_config"] = self.get_text_config()``) that part as ``<Class>(**kwargs)``."""
    methods = tuple(
        (node.name, {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)})
        for node in (tester[0] if tester is not None else ())
    )
    parts = built_parts(methods, tester_attribute)

    def attribute(key: str) -> object:
        value = tester_attribute(key)
        return parts[key] if value is ABSENT and key in parts else value

    return attribute if parts else tester_attribute


def _tester_method(
    resolver: Resolver,
    linearization: tuple[ClassRef, ...],
    sources: Callable[[str], ast.Module | None],
    method: str,
    tester_attribute: Callable[[str], object] | None = None,
) -> ast.FunctionDef | None:
    """The definition of the tester's ``method`` first found along its MRO (None if not readable);
    ``"<attribute>.<method>"`` is a method of a tester it holds (with ``tester_attribute``)."""
    tester, _ = resolver.tester_class(linearization)
    if tester is None or tester.external:
        return None
    if "." in method:
        if tester_attribute is None:
            return None
        return held_tester_method(resolver, tester, sources, tester_attribute, method)
    return method_along(resolver, tester, sources, method)


def _classes_in(code: str, library: Library) -> tuple[LibraryClass, ...] | None:
    """The classes of ``(A, B) if is_torch_available() else ()`` / ``(A, B)`` / ``[A]``; None if unreadable."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return None
    node = environment.installed_branch(node)
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    found = []
    for element in node.elts:
        name = element.attr if isinstance(element, ast.Attribute) else getattr(element, "id", None)
        info = library.find(name) if name else None
        if info is None:
            return None
        found.append(info)
    return tuple(found)


def _model_classes(
    resolver: Resolver, linearization: tuple[ClassRef, ...], library: Library
) -> tuple[LibraryClass, ...] | None:
    value, _ = resolver.class_attribute(linearization, "all_model_classes")
    if isinstance(value, NonLiteral):
        return _classes_in(value.code, library)
    if isinstance(value, tuple | list) and not value:
        return ()
    if value is None:  # filled in by setUp from a conventional tester
        return _conventional_classes(resolver, linearization, library)
    return None


def _conventional_classes(
    resolver: Resolver, linearization: tuple[ClassRef, ...], library: Library
) -> tuple[LibraryClass, ...] | None:
    tester, _ = resolver.tester_class(linearization)
    if tester is None or tester.external:
        return None
    family = next(
        (
            _CONVENTIONAL_CLASSES[ref.name]
            for ref in resolver.mro(tester)
            if ref.name in _CONVENTIONAL_CLASSES
        ),
        None,
    )
    if family is None:
        return None
    base = _named_class(resolver.tester_attribute(linearization, "base_model_class"), library)
    if base is None:
        return None
    prefix = base.name.replace("Model", "")
    found = []
    for attribute_name, suffix in family:
        value = resolver.tester_attribute(linearization, attribute_name)
        info = _named_class(value, library)
        if info is None and value is None and suffix is not None:
            info = library.find(prefix + suffix) if suffix else base
        elif info is None and value is not None and value is not _MISSING:
            return None
        if info is not None:
            found.append(info)
    return tuple(found)


def _named_class(value: object, library: Library) -> LibraryClass | None:
    if isinstance(value, NonLiteral):
        return library.find(value.code.rpartition(".")[2])
    if isinstance(value, ClassName):
        return library.find(value.name)
    return None


def _config_class(
    resolver: Resolver,
    linearization: tuple[ClassRef, ...],
    library: Library,
    model_classes: tuple[LibraryClass, ...] | None,
) -> LibraryClass | None:
    """The configuration class the tester builds: its ``config_class``, else the model classes'."""
    found = _named_class(resolver.tester_attribute(linearization, "config_class"), library)
    if found is not None:
        return found
    if model_classes:
        value = library.attribute(model_classes[0], "config_class")
        if isinstance(value, ClassName):
            return library.find(value.name)
        return library.annotation(model_classes[0], "config")
    return None


def _installed(code: str) -> str:
    """``code`` as the test runs it: ``LlamaForCausalLM if is_torch_available() else None`` is
    ``LlamaForCausalLM`` (see ``environment.installed_branch``)."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return code
    branch = environment.installed_branch(node)
    return code if branch is node else ast.unparse(branch)
