"""What a model's ``forward`` returns, read from the source of the library file that defines it.

The library's records keep names and literals only; the generation tests also ask whether the
output of ``model(**inputs)`` holds ``past_key_values``. That depends on the output class the
forward is annotated to return (a ``ModelOutput`` dataclass: a field it lacks is never a key, a
field left None is dropped from its keys) and on how the model's file gates its cache on
``use_cache``. Files are read through :meth:`Library.source` and parsed once per library
(:meth:`Library.memoized`, so a verdict cache knows which files a verdict read).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from model_debugging.skips.library.index import Library
from model_debugging.skips.library.records import LibraryClass

_Read = TypeVar("_Read")

_OUTPUT_BASE = "ModelOutput"
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


def parsed_file(library: Library, path: str) -> ast.Module | None:
    """The ``ast`` of a library file, parsed once per library (its read is replayed for tracking)."""
    return library.memoized(("parsed_file", path), lambda: _parse(library.source(path)))


def _parse(text: str | None) -> ast.Module | None:
    try:
        return ast.parse(text) if text is not None else None
    except SyntaxError:
        return None


def _of_forward_file(
    library: Library, info: LibraryClass, read: Callable[[ast.Module | None], _Read], missing: _Read
) -> _Read:
    """``read`` of the tree of the file defining ``info``'s ``forward``, once per file (memoized with
    its reads); ``missing`` when no ``forward`` is found."""
    owner = library.defines(info, "forward")
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return missing
    return library.fact(_forward_file_read, read, missing, path, owner.name, owner.line)


def _forward_file_read(
    library: Library,
    read: Callable[[ast.Module | None], _Read],
    missing: _Read,
    path: str,
    owner: str,
    line: int,
) -> _Read:
    """``read`` of the tree of file ``path`` (once per file) when its class ``owner`` defines
    ``forward``, else ``missing``: the value a model depends on, not the forward's text."""
    if library.fact(_method_node, path, owner, line, "forward") is None:
        return missing
    return library.fact(_file_read, read, path)


def _file_read(library: Library, read: Callable[[ast.Module | None], _Read], path: str) -> _Read:
    return read(parsed_file(library, path))


def _method(library: Library, info: LibraryClass, name: str) -> tuple[str, ast.FunctionDef] | None:
    """The definition of ``name`` first found along ``info``'s MRO, with the path of its file."""
    owner = library.defines(info, name)
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return None
    node = library.fact(_method_node, path, owner.name, owner.line, name)
    return None if node is None else (path, node)


def _method_node(library: Library, path: str, owner: str, line: int, name: str) -> ast.FunctionDef | None:
    """Method ``name`` of the class ``owner`` of file ``path`` (the one at ``line`` if it has several)."""
    tree = parsed_file(library, path)
    if tree is None:
        return None
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == owner]
    classes.sort(key=lambda node: node.lineno != line)  # the one at the recorded line first
    for node in classes[:1]:
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == name:
                return item
    return None


def output_fields(library: Library, info: LibraryClass) -> tuple[frozenset[str], ...] | None:
    """The fields of each ``ModelOutput`` class ``forward``'s return annotation names; None when it
    names none (or one whose fields cannot all be read)."""
    owner = library.defines(info, "forward")
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return None
    return library.fact(_forward_output_fields, path, owner.name, owner.line)


def _forward_output_fields(
    library: Library, path: str, owner: str, line: int
) -> tuple[frozenset[str], ...] | None:
    function = library.fact(_method_node, path, owner, line, "forward")
    if function is None or function.returns is None:
        return None
    annotation = function.returns
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    names = [
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(annotation)
        if isinstance(node, (ast.Name, ast.Attribute))
    ]
    outputs = [_fields(library, name, path) for name in names]
    if any(fields is _UNREADABLE for fields in outputs):
        return None
    found_fields = tuple(fields for fields in outputs if isinstance(fields, frozenset))
    return found_fields or None


_UNREADABLE = object()  # an output class whose fields could not all be read


def _fields(library: Library, name: str, near: str, depth: int = 0) -> object:
    """The fields of the output class ``name`` (seen from the file ``near``); None when ``name`` is
    not an output class; :data:`_UNREADABLE` when it is one only partly read."""
    if name == _OUTPUT_BASE:
        return frozenset()
    if depth > 8:
        return _UNREADABLE
    record = library.find(name, near)
    if record is not None:
        fields = {key for key, _ in record.attributes}
        bases = [(base, library.path_of(record) or near) for base in record.bases]
    else:
        node = _shared_output(library, name, near)
        if node is None:
            return None
        fields = {
            item.target.id
            for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        }
        bases = [(base.id, near) for base in node.bases if isinstance(base, ast.Name)]
    is_output = False
    for base, where in bases:
        inherited = _fields(library, base, where, depth + 1)
        if inherited is _UNREADABLE:
            return _UNREADABLE
        if isinstance(inherited, frozenset):
            is_output = True
            fields |= inherited
    return frozenset(fields) if is_output else None


def _shared_output(library: Library, name: str, near: str) -> ast.ClassDef | None:
    """``name`` in the package's ``modeling_outputs.py`` (where the shared output classes live)."""
    package = near.split("/models/")[0] if "/models/" in near else near.rsplit("/", 1)[0]
    return library.fact(_output_class_node, f"{package}/modeling_outputs.py", name)


def _output_class_node(library: Library, path: str, name: str) -> ast.ClassDef | None:
    tree = parsed_file(library, path)
    if tree is None:
        return None
    return next((node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name), None)


def parameter_default(library: Library, info: LibraryClass, method: str, parameter: str) -> object:
    """The literal default of ``parameter`` in ``method`` (None when it has none or is not literal)."""
    owner = library.defines(info, method)
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return None
    return library.fact(_literal_default, path, owner.name, owner.line, method, parameter)


def _literal_default(
    library: Library, path: str, owner: str, line: int, method: str, parameter: str
) -> object:
    function = library.fact(_method_node, path, owner, line, method)
    if function is None:
        return None
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [
        *zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True),
        *((item, default) for item, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)),
    ]
    for argument, default in pairs:
        if argument.arg == parameter and isinstance(default, ast.Constant):
            return default.value
    return None


def cache_gating(library: Library, info: LibraryClass) -> CacheGating | None:
    """How the forwards of the file defining ``info``'s ``forward`` gate the cache (read once per file)."""
    return _of_forward_file(library, info, _file_gating, None)


def _file_gating(tree: ast.Module | None) -> CacheGating | None:
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
    delegated = any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _DELEGATING
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id.startswith("Auto")
        for node in ast.walk(tree)
    )
    return CacheGating(flags["gated"], flags["ungated"], flags["overridden"], delegated, tuple(disabled))


def method_definition(library: Library, info: LibraryClass, name: str) -> ast.FunctionDef | None:
    """The ``ast`` of method ``name`` as the first class of ``info``'s MRO defining it writes it."""
    found = _method(library, info, name)
    return found[1] if found is not None else None


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
    found = _method(library, info, "forward")
    if found is None:
        return True
    function = found[1]
    for decorator in function.decorator_list:
        name = decorator.func if isinstance(decorator, ast.Call) else decorator
        if not isinstance(name, ast.Name) or name.id not in _USE_CACHE_INERT:
            return True
    return any(isinstance(node, ast.Attribute) and node.attr == "use_cache" for node in ast.walk(function))


def forward_sets_use_cache(library: Library, info: LibraryClass) -> bool:
    """Whether ``info``'s own ``forward`` assigns ``use_cache`` other than from its argument or the
    configuration (outside training-only branches), as :class:`CacheGating`'s ``overridden`` says of
    a whole file: a layer's local ``use_cache = cache_params is not None`` is not the model's."""
    found = _method(library, info, "forward")
    if found is None:
        return True
    flags = {"gated": False, "ungated": False, "overridden": False}
    _visit(found[1].body, (), flags, [])
    return flags["overridden"]


def hands_on_use_cache(library: Library, info: LibraryClass) -> bool | None:
    """Whether ``info``'s ``forward`` passes the ``use_cache`` it was given to the calls it makes
    (``use_cache=use_cache``, or ``**kwargs`` holding it when it is no named parameter); None when
    a call is given another value (``use_cache=True``) or the ``forward`` is not read."""
    found = _method(library, info, "forward")
    if found is None:
        return None
    arguments = found[1].args
    named = any(argument.arg == "use_cache" for argument in (*arguments.args, *arguments.kwonlyargs))
    kwargs = arguments.kwarg.arg if arguments.kwarg is not None else None
    handed = False
    for node in ast.walk(found[1]):
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
    return _of_forward_file(library, info, _file_parts, None)


def _file_parts(tree: ast.Module | None) -> tuple[tuple[str, str], ...] | None:
    if tree is None:
        return None
    parts = []
    for node in ast.walk(tree):
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
    return _of_forward_file(library, info, _file_builds_no_cache, False)


def _file_builds_no_cache(tree: ast.Module | None) -> bool:
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _from_another_model(node):
            return False  # what it imports is not read
    skipped = {
        id(item)
        for owner in ast.walk(tree)
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


def _outside(tree: ast.AST, skipped: set[int]):
    """Every node of ``tree`` but those inside the functions whose ids are in ``skipped``."""
    for child in ast.iter_child_nodes(tree):
        if id(child) not in skipped:
            yield child
            yield from _outside(child, skipped)


def _builds_cache(node: ast.AST) -> bool:
    """``XCache(...)`` or ``XCache.method(...)``."""
    if not isinstance(node, ast.Call):
        return False
    function = node.func.value if isinstance(node.func, ast.Attribute) else node.func
    return isinstance(function, ast.Name) and function.id.endswith("Cache")
