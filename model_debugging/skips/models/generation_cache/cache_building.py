"""How a modeling file's forwards treat ``use_cache`` and the cache, read from its source.

Whether ``model(**inputs)`` returns ``past_key_values`` depends on where the model's file builds a
cache (under ``use_cache``, whatever it says, or only for generation), on what its forwards do
with ``use_cache`` (assign it, hand it on, fill it from the configuration, turn it off under ``if``
tests) and on the models it builds from its configuration. Files are read through
:func:`~model_debugging.skips.models.generation_cache.model_outputs.of_forward_file`, once per file.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

from model_debugging.skips.models.generation_cache.model_outputs import of_forward, of_forward_file
from model_debugging.skips.parse.ast_nodes import child_nodes, walk
from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

# ``AutoModel.from_config(config.text_config)``: a model chosen at run time, its cache built elsewhere.
_DELEGATING = frozenset({"from_config", "_from_config"})


@dataclass(frozen=True)
class CacheGating:
    """How a modeling file's forwards treat ``use_cache``.

    ``gated``: some forward builds a cache only when ``use_cache`` is true (``if use_cache and
    past_key_values is None: past_key_values = DynamicCache(...)``); ``ungated``: some forward builds
    one whatever ``use_cache`` is; ``overridden``: some forward assigns ``use_cache`` other than from
    its argument or the configuration (outside training-only branches); ``delegated``: the file
    builds a model from a sub-configuration (``AutoModel.from_config``), whose cache is elsewhere.
    """

    gated: bool
    ungated: bool
    overridden: bool
    delegated: bool
    # ``use_cache = False`` (under ``if`` tests): (class whose forward does it, the tests that must hold)
    disabled: tuple[tuple[str, tuple[ast.expr, ...]], ...] = ()

    @property
    def follows_use_cache(self) -> bool:
        """The returned cache exists exactly when ``use_cache`` is true."""
        return self.gated and not (self.ungated or self.overridden or self.delegated)


def cache_gating(library: Library, info: LibraryClass) -> CacheGating | None:
    """How the forwards of the file defining ``info``'s ``forward`` gate the cache (read once per file)."""
    gating = of_forward_file(library, info, _file_gating, None, forwards_only=True)
    if gating is None:
        return None
    delegated = of_forward_file(library, info, _builds_from_config, False, mentioning="from_config")
    return dataclasses.replace(gating, delegated=delegated)


def _file_gating(tree: ast.Module | None) -> CacheGating | None:
    """The gating of the forwards of a file (``tree``: its forwards), but ``delegated``."""
    if tree is None:
        return None
    flags = {"gated": False, "ungated": False, "overridden": False}
    disabled: list[tuple[str, tuple[ast.expr, ...]]] = []
    for owner in tree.body if isinstance(tree, ast.Module) else ():
        for node in owner.body if isinstance(owner, ast.ClassDef) else ():
            if isinstance(node, ast.FunctionDef) and node.name == "forward":
                found_disabled: list[tuple[ast.expr, ...]] = []
                _visit(node.body, (), flags, found_disabled)
                disabled += [(owner.name, conditions) for conditions in found_disabled]
    return CacheGating(flags["gated"], flags["ungated"], flags["overridden"], False, tuple(disabled))


def _builds_from_config(tree: ast.Module | None) -> bool:
    """Whether the file calls ``Auto*.from_config`` / ``Auto*._from_config`` anywhere."""
    return tree is not None and any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _DELEGATING
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id.startswith("Auto")
        for node in walk(tree)
    )


# Decorators of a forward that never fill ``use_cache`` from the configuration (unlike
# ``merge_with_config_defaults``).
_USE_CACHE_INERT = frozenset(
    {
        "auto_docstring", "can_return_tuple", "capture_outputs", "filter_output_hidden_states",
        "deprecate_kwarg", "replace_return_docstrings", "add_start_docstrings_to_model_forward",
    }
)  # fmt: skip


def reads_configured_use_cache(library: Library, info: LibraryClass) -> bool:
    """Whether ``info``'s ``forward`` may take ``use_cache`` from its configuration when given None:
    False only when its decorators are known not to and its body reads no ``.use_cache``."""
    return of_forward(library, info, _reads_configured_use_cache)


def _reads_configured_use_cache(function: ast.FunctionDef | None) -> bool:
    if function is None:
        return True
    for decorator in function.decorator_list:
        name = decorator.func if isinstance(decorator, ast.Call) else decorator
        if not isinstance(name, ast.Name) or name.id not in _USE_CACHE_INERT:
            return True
    return any(isinstance(node, ast.Attribute) and node.attr == "use_cache" for node in walk(function))


def forward_sets_use_cache(library: Library, info: LibraryClass) -> bool:
    """Whether ``info``'s own ``forward`` assigns ``use_cache`` other than from its argument or the
    configuration (outside training-only branches), as :class:`CacheGating`'s ``overridden`` says of
    a whole file: a layer's local ``use_cache = cache_params is not None`` is not the model's."""
    return of_forward(library, info, _sets_use_cache)


def _sets_use_cache(function: ast.FunctionDef | None) -> bool:
    if function is None:
        return True
    flags = {"gated": False, "ungated": False, "overridden": False}
    _visit(function.body, (), flags, [])
    return flags["overridden"]


def hands_on_use_cache(library: Library, info: LibraryClass) -> bool | None:
    """Whether ``info``'s ``forward`` passes the ``use_cache`` it was given to the calls it makes
    (``use_cache=use_cache``, or ``**kwargs`` holding it when it is no named parameter); None when
    a call is given another value (``use_cache=True``) or the ``forward`` is not read."""
    return of_forward(library, info, _hands_on_use_cache)


def _hands_on_use_cache(function: ast.FunctionDef | None) -> bool | None:
    if function is None:
        return None
    found = signature(function, method=False)
    named, kwargs = "use_cache" in found.names, found.kwargs
    handed = False
    for node in walk(function):
        for keyword in node.keywords if isinstance(node, ast.Call) else ():
            if keyword.arg == "use_cache":
                if not (isinstance(keyword.value, ast.Name) and keyword.value.id == "use_cache"):
                    return None
                handed = True
            elif keyword.arg is None and not named and ast.unparse(keyword.value) == kwargs:
                handed = True
    return handed


def delegated_parts(library: Library, info: LibraryClass) -> tuple[tuple[str, str], ...] | None:
    """``(auto class, part)`` for each ``Auto*.from_config(config.<part>)`` in the file of ``info``'s
    ``forward``; None when one builds from something else than a part of the configuration."""
    return of_forward_file(library, info, _file_parts, None, mentioning="from_config")


def _file_parts(tree: ast.Module | None) -> tuple[tuple[str, str], ...] | None:
    if tree is None:
        return None
    parts = []
    for node in walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _DELEGATING
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id.startswith("Auto")
        ):
            continue
        argument = node.args[0] if node.args else None
        if not (
            isinstance(argument, ast.Attribute) and ast.unparse(argument.value) in ("config", "self.config")
        ):
            return None
        parts.append((node.func.value.id, argument.attr))
    return tuple(dict.fromkeys(parts))


def _visit(
    statements: list[ast.stmt],
    conditions: tuple[ast.expr, ...],
    flags: dict[str, bool],
    disabled: list[tuple[ast.expr, ...]],
) -> None:
    """Walk a forward's statements with the ``if`` tests that must hold to reach each one."""
    for statement in statements:
        if isinstance(statement, ast.If):
            _visit(statement.body, (*conditions, statement.test), flags, disabled)
            _visit(statement.orelse, (*conditions, ast.UnaryOp(ast.Not(), statement.test)), flags, disabled)
            continue
        if isinstance(statement, (ast.For, ast.While, ast.With, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                _visit(getattr(statement, block, []), conditions, flags, disabled)
            for handler in getattr(statement, "handlers", []):
                _visit(handler.body, conditions, flags, disabled)
            continue
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        names = {target.id for target in targets if isinstance(target, ast.Name)}
        turned_off = isinstance(statement.value, ast.Constant) and statement.value.value is False
        if "use_cache" in names and turned_off and not _training_only(conditions):
            disabled.append(conditions)  # use_cache = False (under if tests): decided on the call
        elif "use_cache" in names and not _from_argument(statement.value) and not _training_only(conditions):
            flags["overridden"] = True
        if "past_key_values" in names and _builds(statement.value):
            flags["gated" if any(_requires_use_cache(test) for test in conditions) else "ungated"] = True


def _builds(value: ast.expr | None) -> bool:
    """A new cache: a call, or ``A(...) if <test> else B(...)`` (BERT's encoder-decoder cache);
    ``getattr(self, "past_key_values", past_key_values)`` only reads one."""
    if isinstance(value, ast.IfExp):
        return _builds(value.body) and _builds(value.orelse)
    return isinstance(value, ast.Call) and not (
        isinstance(value.func, ast.Name) and value.func.id == "getattr"
    )


def _from_argument(value: ast.expr | None) -> bool:
    """``use_cache if use_cache is not None else self.config.use_cache`` (or the plain argument)."""
    if isinstance(value, ast.Name):
        return value.id == "use_cache"
    return (
        isinstance(value, ast.IfExp)
        and isinstance(value.body, ast.Name)
        and value.body.id == "use_cache"
        and isinstance(value.orelse, ast.Attribute)
        and value.orelse.attr == "use_cache"
    )


def _training_only(conditions: tuple[ast.expr, ...]) -> bool:
    """A branch taken only while training with gradient checkpointing (never by default):
    ``self.gradient_checkpointing and ...`` or ``self.is_gradient_checkpointing and ...``."""
    return any(
        isinstance(test, ast.BoolOp)
        and isinstance(test.op, ast.And)
        and any(
            isinstance(part, ast.Attribute)
            and part.attr in ("gradient_checkpointing", "is_gradient_checkpointing")
            for part in test.values
        )
        for test in conditions
    )


def _requires_use_cache(test: ast.expr) -> bool:
    """A test that is false whenever ``use_cache`` is: ``use_cache`` itself, or an ``and`` with it."""
    if isinstance(test, ast.Name):
        return test.id == "use_cache"
    return (
        isinstance(test, ast.BoolOp)
        and isinstance(test.op, ast.And)
        and any(map(_requires_use_cache, test.values))
    )


# Methods that only prepare a generation step: a cache they build is never one ``model(...)`` returns.
_GENERATION_ONLY = frozenset({"prepare_inputs_for_generation", "_prepare_cache_for_generation"})


def builds_no_cache(library: Library, info: LibraryClass) -> bool:
    """The file of ``info``'s ``forward`` never builds a cache outside generation-only methods (no
    call to a ``...Cache`` class or method of one) and imports nothing from another model's file
    (``from ..x.modeling_x``, ``from transformers.models...``): a forward of its models returns only
    a cache it was given (hybrid models such as Zamba build theirs in ``prepare_inputs_for_generation``)."""
    return of_forward_file(library, info, _file_builds_no_cache, False)


def _file_builds_no_cache(tree: ast.Module | None) -> bool:
    if tree is None:
        return False
    for node in walk(tree):
        if isinstance(node, ast.ImportFrom) and _from_another_model(node):
            return False  # what it imports is not read
    skipped = {
        id(item)
        for owner in walk(tree)
        if isinstance(owner, ast.ClassDef)
        for item in owner.body
        if isinstance(item, ast.FunctionDef)
        and (item.name in _GENERATION_ONLY or owner.name.endswith("Cache"))
    }
    return not any(_builds_cache(node) for node in _outside(tree, skipped))


def _from_another_model(node: ast.ImportFrom) -> bool:
    """``from ..x.modeling_x import ...``, ``from transformers.models.x... import ...`` or ``from
    transformers import ...`` (a name that may be any model's); the package's other modules
    (``from transformers.activations import ACT2FN``) hold no model."""
    module = node.module or ""
    return node.level == 2 or module == "transformers" or module.startswith("transformers.models")


def _outside(tree: ast.AST, skipped: set[int]) -> list[ast.AST]:
    """Every node below ``tree`` but the functions whose ids are in ``skipped`` and what they hold."""
    nodes = [child for child in child_nodes(tree) if id(child) not in skipped]
    for node in nodes:  # grows while it is read
        nodes.extend(child for child in child_nodes(node) if id(child) not in skipped)
    return nodes


def _builds_cache(node: ast.AST) -> bool:
    """``XCache(...)`` or ``XCache.method(...)``, or a legacy cache grown layer by layer
    (``next_decoder_cache += (layer_outputs[1],)``)."""
    if isinstance(node, ast.AugAssign):
        return isinstance(node.target, ast.Name) and "cache" in node.target.id.lower()
    if not isinstance(node, ast.Call):
        return False
    function = node.func.value if isinstance(node.func, ast.Attribute) else node.func
    return isinstance(function, ast.Name) and function.id.endswith("Cache")
