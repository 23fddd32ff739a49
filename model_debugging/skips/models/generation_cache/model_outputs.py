"""What a model's ``forward`` returns, and the methods of library classes the evaluation reads.

The generation tests ask whether the output of ``model(**inputs)`` holds ``past_key_values``. That
depends on the output class the forward is annotated to return (a ``ModelOutput`` dataclass: a
field it lacks is never a key, a field left None is dropped from its keys) and on how the model's
file gates its cache on ``use_cache``
(:mod:`~model_debugging.skips.models.generation_cache.cache_building`). What the forwards say was
read when the library file was parsed (:class:`ForwardReading`, :class:`FileCacheReading`); each
is asked for as a :meth:`Library.fact`, so a model depends on what it says, not on the file's text.

Other methods (``get_text_config``, the configurations' properties...) are read from the file's
whole tree, parsed once per library (:meth:`Library.memoized`, so a recording knows which files
were read).
"""

from __future__ import annotations

import ast

from model_debugging.skips.records.cache_readings import FileCacheReading, ForwardReading
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

_OUTPUT_BASE = "ModelOutput"


def parsed_file(library: Library, path: str) -> ast.Module | None:
    """The ``ast`` of a library file, parsed once per library (its read is replayed for tracking)."""
    return library.memoized(("parsed_file", path), lambda: _parse(library.source(path)))


def _parse(text: str | None) -> ast.Module | None:
    try:
        return ast.parse(text) if text is not None else None
    except SyntaxError:
        return None


def forward_reading(library: Library, info: LibraryClass) -> ForwardReading | None:
    """What the evaluation reads of the ``forward`` first found along ``info``'s MRO (None when
    none is, or its class is not written at the top of its file), as a fact: a model depends on
    what it says, not on every statement of it."""
    owner = library.defines(info, "forward")
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return None
    return library.fact(_forward_reading, path, owner.name, owner.line)


def _forward_reading(library: Library, path: str, owner: str, line: int) -> ForwardReading | None:
    return library.forward_reading(path, owner, line)


def forward_file_reading(library: Library, info: LibraryClass) -> FileCacheReading | None:
    """What the evaluation reads of the file defining the ``forward`` first found along ``info``'s
    MRO (None when :func:`forward_reading` is None), as a fact."""
    owner = library.defines(info, "forward")
    path = library.path_of(owner) if owner is not None else None
    if path is None:
        return None
    return library.fact(_forward_file_reading, path, owner.name, owner.line)


def _forward_file_reading(library: Library, path: str, owner: str, line: int) -> FileCacheReading | None:
    if library.fact(_forward_reading, path, owner, line) is None:
        return None
    return library.cache_reading(path)


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
    reading = library.fact(_forward_reading, path, owner, line)
    if reading is None or reading.output_names is None:
        return None
    outputs = [_fields(library, name, path) for name in reading.output_names]
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


def method_definition(library: Library, info: LibraryClass, name: str) -> ast.FunctionDef | None:
    """The ``ast`` of method ``name`` as the first class of ``info``'s MRO defining it writes it."""
    found = _method(library, info, name)
    return found[1] if found is not None else None
