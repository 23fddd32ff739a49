"""How a modeling file's forwards treat ``use_cache`` and the cache, read from its tree when the
library file is parsed.

Whether ``model(**inputs)`` returns ``past_key_values`` depends on where the model's file builds a
cache (under ``use_cache``, whatever it says, or only for generation), on what its forwards do
with ``use_cache`` (assign it, hand it on, fill it from the configuration, turn it off under ``if``
tests) and on the models it builds from its configuration.

These readings look at method bodies the library's parse otherwise leaves out: a body is kept
when its text holds a word they look for (:data:`FORWARD_WORDS` in a ``forward``,
:data:`BODY_WORDS` in any method; see ``unread_bodies.py``). A body without one reads the same
as ``pass`` to every reading here, so the readings of the reduced tree are those of the whole file.
"""

from __future__ import annotations

import ast
import re

from model_debugging.skips.parse.ast_nodes import child_nodes, walk
from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.records.cache_readings import CacheGating, FileCacheReading, ForwardReading

# ``AutoModel.from_config(config.text_config)``: a model chosen at run time, its cache built elsewhere.
_DELEGATING = frozenset({"from_config", "_from_config"})
# Decorators of a forward that never fill ``use_cache`` from the configuration (unlike
# ``merge_with_config_defaults``).
_USE_CACHE_INERT = frozenset(
    {
        "auto_docstring", "can_return_tuple", "capture_outputs", "filter_output_hidden_states",
        "deprecate_kwarg", "replace_return_docstrings", "add_start_docstrings_to_model_forward",
    }
)  # fmt: skip
# Methods that only prepare a generation step: a cache they build is never one ``model(...)`` returns.
_GENERATION_ONLY = frozenset({"prepare_inputs_for_generation", "_prepare_cache_for_generation"})

# What a forward's readings look for: ``use_cache`` and ``past_key_values`` (read, assigned, passed)
# and ``**`` (``**kwargs`` passed on).
FORWARD_WORDS = re.compile(r"use_cache|past_key_values|\*\*")
# What the file's readings look for in any method: ``from_config``; an import; a call of ``XCache``
# or of a method of it (``DynamicCache(...)``, ``DynamicCache.from_legacy_cache(...)``, with
# brackets, comments or line continuations between); an augmented assignment of a name holding
# ``cache`` (``next_decoder_cache += ...``).
_GAP = r"(?:[\s\\)]|#[^\n]*)*"
BODY_WORDS = re.compile(
    rf"from_config|import|Cache(?!\w){_GAP}[(.]|(?i:cache)\w*{_GAP}(?://|\*\*|<<|>>|[-+*/%&|^@])="
)


def forward_reading(function: ast.FunctionDef) -> ForwardReading:
    return ForwardReading(
        output_names=_output_names(function),
        use_cache_default=_literal_default(function, "use_cache"),
        reads_configured_use_cache=_reads_configured_use_cache(function),
        sets_use_cache=_sets_use_cache(function),
        hands_on_use_cache=_hands_on_use_cache(function),
    )


def file_cache_reading(tree: ast.Module, forwards: list[tuple[str, ast.FunctionDef]]) -> FileCacheReading:
    """The readings of a file's ``tree``; ``forwards``: the forward of each class written at the top
    of it, by class name."""
    return FileCacheReading(
        gating=_file_gating(forwards, delegated=_builds_from_config(tree)),
        parts=_file_parts(tree),
        builds_no_cache=_file_builds_no_cache(tree),
    )


def _output_names(function: ast.FunctionDef) -> tuple[str, ...] | None:
    annotation = function.returns
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    return tuple(
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(annotation)
        if isinstance(node, (ast.Name, ast.Attribute))
    )


def _literal_default(function: ast.FunctionDef, parameter: str) -> object:
    """The literal default of ``parameter`` (None when it has none or it is not a literal)."""
    default = signature(function, method=False).defaults.get(parameter)
    return default.value if isinstance(default, ast.Constant) else None


def _file_gating(forwards: list[tuple[str, ast.FunctionDef]], delegated: bool) -> CacheGating:
    flags = {"gated": False, "ungated": False, "overridden": False}
    disabled: list[tuple[str, tuple[ast.expr, ...]]] = []
    for owner, function in forwards:
        found_disabled: list[tuple[ast.expr, ...]] = []
        _visit(function.body, (), flags, found_disabled)
        disabled += [(owner, conditions) for conditions in found_disabled]
    return CacheGating(flags["gated"], flags["ungated"], flags["overridden"], delegated, tuple(disabled))


def _delegating_calls(tree: ast.Module) -> list[ast.Call]:
    """``Auto*.from_config(...)`` / ``Auto*._from_config(...)`` anywhere in the file."""
    return [
        node
        for node in walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _DELEGATING
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id.startswith("Auto")
    ]


def _builds_from_config(tree: ast.Module) -> bool:
    return bool(_delegating_calls(tree))


def _reads_configured_use_cache(function: ast.FunctionDef) -> bool:
    for decorator in function.decorator_list:
        name = decorator.func if isinstance(decorator, ast.Call) else decorator
        if not isinstance(name, ast.Name) or name.id not in _USE_CACHE_INERT:
            return True
    return any(isinstance(node, ast.Attribute) and node.attr == "use_cache" for node in walk(function))


def _sets_use_cache(function: ast.FunctionDef) -> bool:
    """As :class:`CacheGating`'s ``overridden`` says of a whole file: a layer's local ``use_cache =
    cache_params is not None`` is not the model's."""
    flags = {"gated": False, "ungated": False, "overridden": False}
    _visit(function.body, (), flags, [])
    return flags["overridden"]


def _hands_on_use_cache(function: ast.FunctionDef) -> bool | None:
    arguments = function.args
    named = any(argument.arg == "use_cache" for argument in (*arguments.args, *arguments.kwonlyargs))
    kwargs = arguments.kwarg.arg if arguments.kwarg is not None else None
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


def _file_parts(tree: ast.Module) -> tuple[tuple[str, str], ...] | None:
    parts = []
    for node in _delegating_calls(tree):
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


def _file_builds_no_cache(tree: ast.Module) -> bool:
    """The file never builds a cache outside generation-only methods (no call to a ``...Cache``
    class or method of one) and imports nothing from another model's file (``from ..x.modeling_x``,
    ``from transformers.models...``): a forward of its models returns only a cache it was given
    (hybrid models such as Zamba build theirs in ``prepare_inputs_for_generation``)."""
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
