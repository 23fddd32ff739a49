"""Read one library source file with the standard library's ``ast`` (never import it).

``ast`` is used here rather than libcst: these files are only read for names, literals and
signatures, and Python's own parser is several times faster (see docs/scanner.md).
"""

from __future__ import annotations

import ast

from model_debugging.skips.parse.always_imports import imported_modules
from model_debugging.skips.parse.ast_nodes import dotted_text, is_class_method, walk
from model_debugging.skips.parse.bound_names import bound_names
from model_debugging.skips.parse.library.class_choices import class_tables
from model_debugging.skips.parse.library.function_nodes import FunctionNodes
from model_debugging.skips.parse.library.init_assignments import init_assignments
from model_debugging.skips.parse.library.init_calls import read_function_calls, read_init_calls
from model_debugging.skips.parse.library.unread_bodies import parse_library_source
from model_debugging.skips.parse.library.values import value_of
from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.records.library import (
    ClassName,
    InitCall,
    LibraryClass,
    LibraryFile,
    Value,
)
from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.source.modules import module_name
from model_debugging.skips.source.scanned_paths import LIBRARY_FOLDER

# Methods the common tests call whose one-line body (``return self.embeddings.patch_embeddings``) is kept.
RETURNING_METHODS = ("get_input_embeddings",)
# Methods whose parameter names the common tests inspect with ``inspect.signature``.
SIGNATURE_METHODS = ("forward", "prepare_inputs_for_generation")
# The model types with weight conversions (conversion_mapping.py), kept as a mapping of that name.
CONVERSION_MAPPING = "_CHECKPOINT_CONVERSION_MODEL_TYPES"
_CONVERSION_BUILDER = "_build_checkpoint_conversion_mapping"
_INIT_METHODS = (
    "__init__",
    "__post_init__",
    "post_init",
)  # post_init: what models call at the end of __init__
# The methods whose bodies the reader reads (with class methods'): the others are elided before the
# parse (see unread_bodies.py).
BODIES_READ = frozenset({*_INIT_METHODS, *RETURNING_METHODS})


def read_library_file(path: str, source: str) -> LibraryFile:
    """The classes, imports and auto mappings of one file; a syntax error is kept as ``error``."""
    try:
        tree, elided = parse_library_source(source, path, BODIES_READ)
    except (SyntaxError, ValueError) as error:
        line = getattr(error, "lineno", 0) or 0
        return LibraryFile(path, error=f"{path}:{line}: {error.__class__.__name__}: {error}")
    classes: list[LibraryClass] = []
    mappings: list[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]] = []
    imports: list[tuple[str, str]] = []
    tables = class_tables(tree.body)
    functions: dict[str, tuple[InitCall, ...]] = {}
    rebound: set[str] = set()  # module-level names also bound to something else than a class
    local_imports: list[tuple[str, str]] = []  # `from x import y` inside a module-level function
    for node in _top_level(tree.body):
        if isinstance(node, ast.ClassDef):
            classes.append(_read_class(node, tables, elided.get(node.lineno, {})))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # defined twice: either may run
            nodes = FunctionNodes(node)
            functions[node.name] = (*functions.get(node.name, ()), *read_function_calls(node, tables, nodes))
            local_imports.extend(_local_imports(nodes))
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            module = "." * node.level + node.module
            imports.extend((alias.asname or alias.name, module) for alias in node.names)
        elif isinstance(node, ast.Import):  # `import torch.nn as nn`: the name stands for the module
            imports.extend((alias.asname, alias.name) for alias in node.names if alias.asname)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            mapping = _read_mapping(node)
            if mapping is not None:
                mappings.append(mapping)
            alias = _class_alias(node)
            if alias is not None:
                functions[alias[0]] = (*functions.get(alias[0], ()), InitCall(alias[1]))
            else:
                rebound.update(_assigned_names(node))
    conversions = _conversion_model_types(tree)
    if conversions is not None:
        mappings.append((CONVERSION_MAPPING, tuple((key, ()) for key in conversions)))
    known = {name for name, _ in imports} | {info.name for info in classes} | set(functions) | rebound
    modules_of_name: dict[str, set[str]] = {}
    for name, module in local_imports:
        modules_of_name.setdefault(name, set()).add(module)
    imports.extend(
        (name, next(iter(found)))
        for name, found in modules_of_name.items()
        if len(found) == 1 and name not in known
    )
    kept = tuple((name, calls) for name, calls in functions.items() if name not in rebound)
    always = imported_modules(tree.body, module_name(path.removeprefix(f"{LIBRARY_FOLDER}/")))
    names = bound_names(tree.body, source)
    return LibraryFile(
        path,
        tuple(classes),
        tuple(mappings),
        tuple(imports),
        functions=kept,
        always_imports=always,
        names=names,
    )


def _local_imports(nodes: FunctionNodes) -> list[tuple[str, str]]:
    """``from ...integrations.hub_kernels import get_kernel`` inside a function: (name, module). Kept
    with the file's imports when the name means nothing else there (it is used only where imported)."""
    return [
        (alias.asname or alias.name, "." * node.level + node.module)
        for node in nodes.of(ast.ImportFrom)
        if node.module is not None
        for alias in node.names
    ]


def _assigned_names(node: ast.Assign | ast.AnnAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {item.id for target in targets for item in ast.walk(target) if isinstance(item, ast.Name)}


def _class_alias(node: ast.Assign | ast.AnnAssign) -> tuple[str, str] | None:
    """``XLayerNorm = nn.LayerNorm`` at module level: (the alias, the dotted name it stands for)."""
    target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
    if not isinstance(target, ast.Name) or not isinstance(node.value, (ast.Name, ast.Attribute)):
        return None
    dotted = ast.unparse(node.value)
    return (target.id, dotted) if dotted.replace(".", "").isidentifier() else None


def _conversion_model_types(tree: ast.Module) -> list[str] | None:
    """The model types ``_build_checkpoint_conversion_mapping()`` gives weight conversions to: the keys
    of its ``mapping = {...}``, those it assigns (``mapping["x"] = ...``), and those of a module-level
    dict it loops over (``for model_type, base in _MODEL_TO_CONVERSION_PATTERN.items()``)."""
    function = next(
        (
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name == _CONVERSION_BUILDER
        ),
        None,
    )
    if function is None:
        return None
    module_dicts = {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Dict)
    }
    keys: list[str] = []
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and ast.unparse(node.targets[0]) == "mapping"
        ):
            keys += [key.value for key in node.value.keys if isinstance(key, ast.Constant)]
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0]
            if ast.unparse(target.value) == "mapping" and isinstance(target.slice, ast.Constant):
                keys.append(target.slice.value)
        elif (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Attribute)
        ):
            source = module_dicts.get(ast.unparse(node.iter.func.value))
            if source is not None:
                keys += [key.value for key in source.keys if isinstance(key, ast.Constant)]
    return sorted(set(keys))


def _top_level(body: list[ast.stmt]):
    """Statements of the module, also those inside top-level ``if`` / ``try`` blocks."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body)
        else:
            yield node


def _read_class(
    node: ast.ClassDef, tables: dict[str, tuple[str, ...]], elided_ends: dict[int, int]
) -> LibraryClass:
    """The record of a class; ``elided_ends`` gives the last line of each method whose body was
    elided before the parse (by its ``def`` line)."""
    attributes: list[tuple[str, Value]] = []
    methods: list[str] = []
    signatures: list[tuple[str, tuple[str, ...]]] = []
    init_defaults: list[tuple[str, Value]] = []
    annotations: list[tuple[str, str]] = []
    init_as_set: list[str] = []
    init_calls: tuple[InitCall, ...] | None = None
    class_vars: list[str] = []
    returns: list[tuple[str, str]] = []
    assigned: set[str] = set()
    forward_lines: tuple[int, int] | None = None
    class_returns: list[tuple[str, str, str]] = []
    functions_seen: set[str] = set()  # a name defined twice is read where it is first defined
    for item in node.body:
        if isinstance(item, ast.Assign):
            value = value_of(item.value)
            attributes.extend((target.id, value) for target in item.targets if isinstance(target, ast.Name))
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            if _is_class_var(item.annotation):
                class_vars.append(item.target.id)
            if item.value is not None:
                attributes.append((item.target.id, value_of(item.value)))
            else:
                attributes.append((item.target.id, NonLiteral("")))
                annotation = value_of(item.annotation, keep_code=False)
                if isinstance(annotation, ClassName):
                    annotations.append((item.target.id, annotation.name))
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.append(item.name)
            if item.name == "forward" and forward_lines is None and isinstance(item, ast.FunctionDef):
                forward_lines = _lines_of(item, elided_ends) if node.col_offset == 0 else None
            if item.name in SIGNATURE_METHODS:
                signatures.append((item.name, _parameter_names(item)))
            returned = _returned(item) if item.name in RETURNING_METHODS else None
            if returned is not None:
                returns.append((item.name, returned))
            if isinstance(item, ast.FunctionDef) and item.name not in functions_seen:
                functions_seen.add(item.name)
                class_return = _class_method_return(item)
                if class_return is not None:
                    class_returns.append((item.name, *class_return))
            if item.name in _INIT_METHODS:
                nodes = FunctionNodes(item)  # walked once for the readings below
                if item.name == "__init__":
                    init_calls = read_init_calls(item, node, tables, nodes)
                defaults, others, as_set = init_assignments(item, nodes)
                init_defaults.extend(defaults)
                assigned |= others
                init_as_set.extend(as_set)
    return LibraryClass(
        name=node.name,
        line=node.lineno,
        bases=tuple(_base_name(base) for base in node.bases),
        attributes=tuple(attributes),
        methods=tuple(methods),
        signatures=tuple(signatures),
        assigned_in_init=tuple(sorted(assigned)),
        init_defaults=tuple((name, value) for name, value in init_defaults if name not in assigned),
        decorators=tuple(dotted_text(decorator) for decorator in node.decorator_list),
        annotations=tuple(annotations),
        init_as_set=tuple(init_as_set),
        init_calls=init_calls,
        class_vars=tuple(class_vars),
        returns=tuple(returns),
        forward_lines=forward_lines,
        class_returns=tuple(class_returns),
    )


def _is_class_var(annotation: ast.expr) -> bool:
    """Whether the text of ``annotation`` before its ``[`` starts with ``ClassVar`` / ``typing.ClassVar``.
    Only a name or an attribute written ``ClassVar...`` can start it: without one, the annotation
    (``torch.Tensor | None``, most of them) is not unparsed."""
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if not any(
        (isinstance(node, ast.Name) and node.id.startswith("ClassVar"))
        or (isinstance(node, ast.Attribute) and node.attr.startswith("ClassVar"))
        for node in walk(head)
    ):
        return False
    return dotted_text(head).startswith(("ClassVar", "typing.ClassVar"))


def _class_method_return(function: ast.FunctionDef) -> tuple[str, str] | None:
    """(its first parameter, the source of ``x``) for a ``@classmethod`` whose body is ``return x``."""
    if not function.args.args or not is_class_method(function):
        return None
    returned = _returned(function)
    return None if returned is None else (function.args.args[0].arg, returned)


def _lines_of(function: ast.FunctionDef, elided_ends: dict[int, int]) -> tuple[int, int]:
    """The first line of ``function`` (its first decorator's) and its last line (that of its
    source when its body was elided)."""
    first = min([function.lineno] + [item.lineno for item in function.decorator_list])
    return first, elided_ends.get(function.lineno, function.end_lineno)


def _returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The source of ``x`` when the method's body (after its docstring) is ``return x``."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return ast.unparse(body[0].value)
    return None


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):  # Generic[T]-style bases
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ast.unparse(node)


def _parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    found = signature(function, method=False)
    names = (*found.positional, found.varargs, *found.keyword_only, found.kwargs)
    return tuple(name for name in names if name is not None and name not in ("self", "cls"))


def _read_mapping(
    node: ast.Assign | ast.AnnAssign,
) -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...]] | None:
    """``NAME_NAMES = OrderedDict([("key", "Class"), ("key", ("A", "B")), ...])``."""
    target = node.targets[0] if isinstance(node, ast.Assign) else node.target
    if not isinstance(target, ast.Name) or not target.id.endswith("_NAMES"):
        return None
    call = node.value
    if not isinstance(call, ast.Call) or len(call.args) != 1:
        return None
    try:
        items = ast.literal_eval(call.args[0])
    except (ValueError, TypeError, SyntaxError):
        return None
    entries = []
    for item in items if isinstance(items, (list, tuple)) else ():
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            names = item[1] if isinstance(item[1], (list, tuple)) else (item[1],)
            entries.append((item[0], tuple(name for name in names if isinstance(name, str))))
    return target.id, tuple(entries)
