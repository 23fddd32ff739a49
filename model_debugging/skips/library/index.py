"""Look classes of the library up by name and follow their inheritance across files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from model_debugging.skips.library.records import LibraryClass, LibraryFile, MethodValue, Value

MISSING = object()


class Library:
    """The classes and auto mappings of a checkout's library sources, indexed by name.

    Class names are nearly unique in the library; when two files define the same name, a base is
    looked up first in the file that names it, then in the file it imports the name from.
    """

    def __init__(self, files: Iterable[LibraryFile], root: Path | None = None):
        """``root`` is the checkout the paths are relative to (for :meth:`source`)."""
        self.root = root
        self._sources: dict[str, str | None] = {}
        self._by_name: dict[str, list[tuple[str, LibraryClass]]] = {}
        self._imports: dict[str, dict[str, str]] = {}
        self.mappings: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {}
        self._mro: dict[tuple[str, str], tuple[LibraryClass, ...]] = {}
        self._where: dict[int, str] = {}
        for library_file in files:
            self._imports[library_file.path] = dict(library_file.imports)
            for info in library_file.classes:
                self._by_name.setdefault(info.name, []).append((library_file.path, info))
                self._where[id(info)] = library_file.path
            for name, entries in library_file.mappings:
                self.mappings.setdefault(name, entries)

    def find(self, name: str, near: str | None = None) -> LibraryClass | None:
        """The class called ``name``; ``near`` is the path of the file that refers to it."""
        candidates = self._by_name.get(name)
        if not candidates:
            return None
        if len(candidates) > 1 and near is not None:
            for path, info in candidates:
                if path == near:
                    return info
            module = self._imports.get(near, {}).get(name, "")
            stem = module.lstrip(".").replace(".", "/")
            for path, info in candidates:
                if stem and path.endswith(f"{stem}.py"):
                    return info
        return candidates[0][1]

    def path_of(self, info: LibraryClass) -> str | None:
        return self._where.get(id(info))

    def source(self, path: str) -> str | None:
        """The text of a library file (common tests read some, e.g. the copyright year); None if unreadable."""
        if path not in self._sources:
            try:
                self._sources[path] = (self.root / path).read_text(encoding="utf-8") if self.root else None
            except (OSError, UnicodeDecodeError):
                self._sources[path] = None
        return self._sources[path]

    def annotation(self, info: LibraryClass, name: str) -> LibraryClass | None:
        """The class annotated for ``name`` (``config: LlamaConfig``) first found along the MRO."""
        for ancestor in self.mro(info):
            for key, class_name in ancestor.annotations:
                if key == name:
                    return self.find(class_name, self.path_of(ancestor))
        return None

    def mro(self, info: LibraryClass) -> tuple[LibraryClass, ...]:
        """C3 linearization over the classes found in the library (unknown bases are left out)."""
        key = (self._where.get(id(info), ""), info.name)
        if key in self._mro:
            return self._mro[key]
        self._mro[key] = (info,)  # cycle guard
        bases = [
            base
            for base in (self.find(name, key[0]) for name in info.bases)
            if base is not None and base is not info
        ]
        lists = [list(self.mro(base)) for base in bases] + [bases]
        result = [info]
        while any(lists):
            head = next(
                (items[0] for items in lists if items and not any(items[0] in other[1:] for other in lists)),
                None,
            )
            if head is None:  # inconsistent: depth first, first occurrence wins
                for items in lists:
                    result += [item for item in items if item not in result]
                break
            result.append(head)
            lists = [[item for item in items if item is not head] for items in lists]
        self._mro[key] = tuple(result)
        return self._mro[key]

    def attribute(self, info: LibraryClass, name: str) -> Value:
        """The class-level value of ``name`` first found along the MRO, or :data:`MISSING`.

        A method of that name counts as found (its value is a function, never a literal).
        """
        for ancestor in self.mro(info):
            for key, value in ancestor.attributes:
                if key == name:
                    return value
            if name in ancestor.methods:
                return MethodValue(ancestor.name, name)
        return MISSING

    def signature(self, info: LibraryClass, method: str) -> tuple[str, ...] | None:
        """Parameter names of ``method`` as the first class of the MRO defining it declares them."""
        for ancestor in self.mro(info):
            if method in ancestor.methods:
                return dict(ancestor.signatures).get(method)
        return None

    def defines(self, info: LibraryClass, method: str) -> LibraryClass | None:
        for ancestor in self.mro(info):
            if method in ancestor.methods:
                return ancestor
        return None

    def mapping_names(self, mapping: str) -> tuple[str, ...] | None:
        """Every class name of an auto mapping (``get_values(MODEL_MAPPING_NAMES)``), in order."""
        entries = self.mappings.get(mapping)
        if entries is None:
            return None
        return tuple(name for _, names in entries for name in names)

    def mapping_keys(self, mapping: str) -> frozenset[str] | None:
        entries = self.mappings.get(mapping)
        return None if entries is None else frozenset(key for key, _ in entries)
