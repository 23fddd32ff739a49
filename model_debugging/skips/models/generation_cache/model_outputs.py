"""What a model's ``forward`` returns, read from the source of the library file that defines it.

The library's records keep names and literals only; the generation tests also ask whether the
output of ``model(**inputs)`` holds ``past_key_values``. That depends on the output class the
forward is annotated to return (a ``ModelOutput`` dataclass: a field it lacks is never a key, a
field left None is dropped from its keys) and on how the model's file gates its cache on
``use_cache`` (:mod:`~model_debugging.skips.models.generation_cache.cache_building`). Files are read through
:meth:`Library.source` and parsed once per library (:meth:`Library.memoized`, so a verdict cache
knows which files a verdict read).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

_Read = TypeVar("_Read")

_OUTPUT_BASE = "ModelOutput"


def parsed_file(library: Library, path: str) -> ast.Module | None:
    """The ``ast`` of a library file, parsed once per library (its read is replayed for tracking)."""
    return library.memoized(("parsed_file", path), lambda: _parse(library.source(path)))


def parsed_forwards(library: Library, path: str) -> ast.Module | None:
    """The ``ast`` of the ``forward`` methods of a library file, each in its class (the classes
    written at the top of the file that define one, at their own lines, holding only it), parsed
    once per library. The forwards are what the cache readings look at, and about two fifths of a
    modeling file: parsing the whole file cost most of what they take."""
    return library.memoized(
        ("parsed_forwards", path), lambda: _parse_forwards(library.source(path), library.forward_lines(path))
    )


def _parse_forwards(text: str | None, spans: tuple[tuple[str, int, int, int], ...]) -> ast.Module | None:
    """``text`` with every line blank but the forwards ``spans`` gives, each under a one-line header
    of its class on the line above it: positions are those of the whole file."""
    if text is None:
        return None
    lines = [line + "\n" for line in text.split("\n")]  # the library reads sources with newlines translated
    kept = ["\n"] * len(lines)
    class_lines = {}
    for name, class_line, first, last in spans:
        if not 2 <= first <= last <= len(lines):
            continue  # not the text the records were read from
        kept[first - 2] = f"class {name}:\n"
        kept[first - 1 : last] = lines[first - 1 : last]
        class_lines[first - 1] = class_line
    tree = _parse("".join(kept))
    for node in tree.body if tree is not None else ():
        node.lineno = class_lines.get(node.lineno, node.lineno)
    return tree


def _parse(text: str | None) -> ast.Module | None:
    try:
        return ast.parse(text) if text is not None else None
    except SyntaxError:
        return None


def of_forward_file(
    library: Library,
    info: LibraryClass,
    read: Callable[[ast.Module | None], _Read],
    missing: _Read,
    *,
    forwards_only: bool = False,
    mentioning: str = "",
) -> _Read:
    """``read`` of the tree of the file defining ``info``'s ``forward``, once per file (memoized with
    its reads); ``missing`` when no ``forward`` is found. ``forwards_only``: the tree of its forwards
    (:func:`parsed_forwards`). ``mentioning``: a reader that looks only for nodes holding that word
    is handed an empty module, not parsed, when the file's text does not hold it."""
    owner = library.defines(info, "forward")
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return missing
    return library.fact(
        _forward_file_read, read, missing, path, owner.name, owner.line, forwards_only, mentioning
    )


def _forward_file_read(
    library: Library,
    read: Callable[[ast.Module | None], _Read],
    missing: _Read,
    path: str,
    owner: str,
    line: int,
    forwards_only: bool,
    mentioning: str,
) -> _Read:
    """``read`` of the tree of file ``path`` (once per file) when its class ``owner`` defines
    ``forward``, else ``missing``: the value a model depends on, not the forward's text."""
    if library.fact(_method_node, path, owner, line, "forward") is None:
        return missing
    return library.fact(_file_read, read, path, forwards_only, mentioning)


def _file_read(
    library: Library,
    read: Callable[[ast.Module | None], _Read],
    path: str,
    forwards_only: bool,
    mentioning: str,
) -> _Read:
    if forwards_only:
        return read(parsed_forwards(library, path))
    if mentioning and mentioning not in (library.source(path) or ""):
        return read(ast.Module(body=[], type_ignores=[]))
    return read(parsed_file(library, path))


def of_forward(
    library: Library, info: LibraryClass, read: Callable[[ast.FunctionDef | None], _Read]
) -> _Read:
    """``read`` of ``info``'s ``forward`` (None when no class of its MRO defines one), as a fact: a
    model depends on what ``read`` makes of it, not on every statement of it."""
    owner = library.defines(info, "forward")
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return read(None)
    return library.fact(_method_read, read, path, owner.name, owner.line, "forward")


def _method_read(
    library: Library,
    read: Callable[[ast.FunctionDef | None], _Read],
    path: str,
    owner: str,
    line: int,
    name: str,
) -> _Read:
    return read(library.fact(_method_node, path, owner, line, name))


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
    tree = parsed_forwards(library, path) if name == "forward" else parsed_file(library, path)
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
    default = signature(function, method=False).defaults.get(parameter)
    return default.value if isinstance(default, ast.Constant) else None


def method_definition(library: Library, info: LibraryClass, name: str) -> ast.FunctionDef | None:
    """The ``ast`` of method ``name`` as the first class of ``info``'s MRO defining it writes it."""
    found = _method(library, info, name)
    return found[1] if found is not None else None
