"""Look classes of the library up by name and follow their inheritance across files.

:class:`Library` is the only way the evaluator reads library facts, and it keeps track of what
it read: inside ``with library.recording() as reads:``, every class it hands out goes to
``reads.classes`` (its file and name), every file whose imports or module functions it reads to
``reads.files``, every auto mapping it hands out to ``reads.mappings`` (by name), every file whose
text it hands out to ``reads.texts``, every name it looks up (found or not) to ``reads.names``, and
the value of every :meth:`Library.fact` asked for
to ``reads.facts``. A rescan (``skips/incremental/``) re-evaluates a model only when one of those
changed (a fact: computed again, its value differs), so a new kind of fact is tracked with no
extra work as long as it is read through a method of this class: a method that hands out a
:class:`LibraryClass` passes it through ``_hand_out``, a mapping records its name, a file's text
goes to ``texts``. A result computed from library facts and kept across models must go through
:meth:`Library.memoized`, which replays the reads of the first computation into every later
recording, or :meth:`Library.fact`, whose value alone the recordings keep: what a fact reads from a
file's text (a method's tree, a regex over the file) then concerns a model only when its value
changes, not on every edit of the file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path

from model_debugging.skips.records.library import InitCall, LibraryClass, LibraryFile, MethodValue, Value
from model_debugging.skips.resolve.library_reads import FactKey, LibraryReads, comparable
from model_debugging.skips.resolve.mro import c3_linearization
from model_debugging.skips.resolve.tracked_mappings import TrackedMappings
from model_debugging.skips.source.files import python_files

MISSING = object()
_UNSEEN = object()


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
        self._functions: dict[str, dict[str, tuple[InitCall, ...]]] = {}
        self._always_imports: dict[str, tuple[tuple[str, int, tuple[str, ...]], ...]] = {}
        self._bound_names: dict[str, frozenset[str] | None] = {}
        self._classes_in: dict[str, tuple[LibraryClass, ...]] = {}
        mappings: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {}
        self._mro: dict[tuple[str, str], tuple[LibraryClass, ...]] = {}
        self._where: dict[int, str] = {}
        self._recordings: list[LibraryReads] = []
        self._memo: dict[object, tuple[object, LibraryReads]] = {}
        self._facts: dict[FactKey, tuple[object, Hashable, LibraryReads]] = {}
        self._mro_reads: dict[tuple[str, str], LibraryReads] = {}
        self._guides: dict[object, object] = {}
        # id of a class -> (the class, its MRO's replay key, its reads, its MRO), once computed
        self._mro_of: dict[int, tuple[LibraryClass, tuple, LibraryReads, tuple[LibraryClass, ...]]] = {}
        # (id of a class, attribute name) -> its value: read through the MRO, which records the reads
        self._attributes: dict[tuple[int, str], Value] = {}
        self._instance_names: dict[int, tuple[frozenset[str], frozenset[str]]] = {}  # by id of a class
        mapping_files: dict[str, str] = {}
        for library_file in files:
            self._imports[library_file.path] = dict(library_file.imports)
            self._functions[library_file.path] = dict(library_file.functions)
            self._always_imports[library_file.path] = library_file.always_imports
            names = library_file.names
            self._bound_names[library_file.path] = None if names is None else frozenset(names)
            self._classes_in[library_file.path] = library_file.classes
            for info in library_file.classes:
                self._by_name.setdefault(info.name, []).append((library_file.path, info))
                self._where[id(info)] = library_file.path
            for name, entries in library_file.mappings:
                mappings.setdefault(name, entries)
                mapping_files.setdefault(name, library_file.path)
        self.mappings = TrackedMappings(self._read, mappings)
        self._mapping_files = mapping_files

    # -- what was read ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def recording(self) -> Iterator[LibraryReads]:
        """Collect what is read inside the block; an enclosing recording sees it too."""
        reads = LibraryReads()
        self._recordings.append(reads)
        try:
            yield reads
        finally:
            self._recordings.pop()
            if self._recordings:
                self._recordings[-1].add(reads)

    def _read(
        self,
        *,
        files: Iterable[str] = (),
        names: Iterable[str] = (),
        texts: Iterable[str] = (),
        mappings: Iterable[str] = (),
    ) -> None:
        if self._recordings:
            reads = self._recordings[-1]
            reads.files.update(files)
            reads.names.update(names)
            reads.texts.update(texts)
            reads.mappings.update(mappings)

    def _hand_out(self, info: LibraryClass | None) -> LibraryClass | None:
        if info is not None and self._recordings:
            self._recordings[-1].classes.add((self._where.get(id(info), ""), info.name))
        return info

    def memoized(self, key: object, compute: Callable[[], object]) -> object:
        """``compute()`` once per ``key`` for this library; later calls replay the reads it made."""
        found = self._memo.get(key)
        if found is None:
            with self.recording() as reads:
                value = compute()
            found = self._memo[key] = (value, reads)
        elif self._recordings:
            self._recordings[-1].replay(("memoized", key), found[1])
        return found[0]

    def guide(self, key: object, compute: Callable[[], object]) -> object:
        """``compute()`` once per ``key`` for this library, what it reads recorded nowhere: only a
        guide to the files worth reading (an index of names by the files whose text spells them).
        An answer must rest on what is then read through the recorded methods, never on the guide."""
        found = self._guides.get(key, _UNSEEN)
        if found is _UNSEEN:
            recordings, self._recordings = self._recordings, []
            try:
                found = self._guides[key] = compute()
            finally:
                self._recordings = recordings
        return found

    def fact(self, compute: Callable[..., object], *arguments: Hashable) -> object:
        """``compute(self, *arguments)`` once per library (``compute`` a module-level function, the
        arguments plain data: a rescan computes it again from them). A recording keeps its value, not
        what computing it read: a model that asked for it is evaluated again only when its value
        changes (see :func:`comparable`)."""
        key = (compute, *arguments)
        found = self._facts.get(key)
        if found is None:
            recordings, self._recordings = self._recordings, []
            try:
                with self.recording() as reads:
                    value = compute(self, *arguments)
            finally:
                self._recordings = recordings
            found = self._facts[key] = (value, comparable(value), reads.flat())
        if self._recordings:
            self._recordings[-1].facts[key] = found[1]
            self._recordings[-1].fact_reads[key] = found[2]
        return found[0]

    def class_read(self, path: str, name: str) -> None:
        """Note that the class ``name`` of ``path`` was read (a fact that reads it from the text)."""
        if self._recordings:
            self._recordings[-1].classes.add((path, name))

    def imported_from(self, path: str, name: str) -> str | None:
        """The module file ``path`` imports ``name`` from, as written (``..activations``), or None."""
        self._read(files=(path,))
        return self._imports.get(path, {}).get(name)

    def always_imports(self, path: str) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
        """(module, line, names taken) of each module file ``path`` imports whenever it is imported;
        none for a file the library does not hold or could not parse."""
        self._read(files=(path,))
        return self._always_imports.get(path, ())

    def bound_names(self, path: str) -> frozenset[str] | None:
        """The names module file ``path`` binds when it runs; None when not told (or not held)."""
        self._read(files=(path,))
        return self._bound_names.get(path)

    def function_calls(self, path: str, name: str) -> tuple[InitCall, ...] | None:
        """The calls of module-level function (or class alias) ``name`` of file ``path``, or None."""
        self._read(files=(path,))
        return self._functions.get(path, {}).get(name)

    def defined_in(self) -> dict[str, tuple[str, ...]]:
        """Class or mapping name -> the files defining it (what a looked-up name depends on)."""
        found = {name: tuple(path for path, _ in candidates) for name, candidates in self._by_name.items()}
        for name, path in self._mapping_files.items():
            found[name] = (*found.get(name, ()), path)
        return found

    def files_defining(self, name: str) -> tuple[str, ...]:
        """The files defining a class called ``name``, in the library's order."""
        self._read(names=(name,))
        return tuple(path for path, _ in self._by_name.get(name, ()))

    def find(self, name: str, near: str | None = None) -> LibraryClass | None:
        """The class called ``name``; ``near`` is the path of the file that refers to it."""
        self._read(names=(name,))
        candidates = self._by_name.get(name)
        if not candidates:
            return None
        if len(candidates) > 1 and near is not None:
            self._read(files=(near,))
            for path, info in candidates:
                if path == near:
                    return self._hand_out(info)
            module = self._imports.get(near, {}).get(name, "")
            stem = module.lstrip(".").replace(".", "/")
            for path, info in candidates:
                if stem and path.endswith(f"{stem}.py"):
                    return self._hand_out(info)
        return self._hand_out(candidates[0][1])

    def path_of(self, info: LibraryClass) -> str | None:
        path = self._where.get(id(info))
        if path is not None:
            self.class_read(path, info.name)
        return path

    def source(self, path: str) -> str | None:
        """The text of a library file (common tests read some, e.g. the copyright year); None if unreadable."""
        self._read(texts=(path,))
        if path not in self._sources:
            try:
                self._sources[path] = (self.root / path).read_text(encoding="utf-8") if self.root else None
            except (OSError, UnicodeDecodeError):
                self._sources[path] = None
        return self._sources[path]

    def listing(self, folder: str) -> tuple[str, ...]:
        """The ``.py`` files under ``folder``, at any depth (:func:`python_files`): a read of the text
        of ``folder/``, whose key is the listing (a rescan sees a file appear or go)."""
        self._read(texts=(f"{folder}/",))
        return python_files(self.root, folder) if self.root is not None else ()

    def exists(self, path: str) -> bool:
        """Whether the checkout has the file ``path``: a fact (computed from its text), so a rescan
        sees the file appear or go, and an edit of a file that stays evaluates no model again."""
        return self.fact(_exists, path)

    def forward_lines(self, path: str) -> tuple[tuple[str, int, int, int], ...]:
        """(class name, class line, first line, last line) of the ``forward`` of each class written
        at the top of file ``path`` that defines one: where its text is, a read of the text."""
        self._read(texts=(path,))
        return tuple(
            (info.name, info.line, *info.forward_lines)
            for info in self._classes_in.get(path, ())
            if info.forward_lines is not None
        )

    def annotation(self, info: LibraryClass, name: str) -> LibraryClass | None:
        """The class annotated for ``name`` (``config: LlamaConfig``) first found along the MRO."""
        for ancestor in self.mro(info):
            for key, class_name in ancestor.annotations:
                if key == name:
                    return self.find(class_name, self.path_of(ancestor))
        return None

    def mro(self, info: LibraryClass) -> tuple[LibraryClass, ...]:
        """Its MRO over the classes found in the library (unknown bases are left out)."""
        found = self._mro_of.get(id(info))
        if found is not None and found[0] is info:  # the evaluation asks hundreds of thousands of times
            if self._recordings:
                self._recordings[-1].replay(found[1], found[2])
            return found[3]
        key = (self._where.get(id(info), ""), info.name)
        if key in self._mro:
            kept = self._mro_reads.get(key)
            if self._recordings and kept is None:  # met again while it is computed: a cycle
                self._recordings[-1].classes.add(key)
            elif self._recordings:
                self._recordings[-1].replay(("mro", key), kept)
            if kept is not None:
                self._mro_of[id(info)] = (info, ("mro", key), kept, self._mro[key])
            return self._mro[key]
        self._mro[key] = (info,)  # cycle guard
        with self.recording() as reads:
            self._mro[key] = self._linearized(info, key[0])
        self._mro_reads[key] = reads
        return self._mro[key]

    def _linearized(self, info: LibraryClass, path: str) -> tuple[LibraryClass, ...]:
        self.class_read(path, info.name)
        bases = [
            base
            for base in (self._base(name, path) for name in info.bases)
            if base is not None and base is not info
        ]
        return c3_linearization(info, [self.mro(base) for base in bases], bases)

    def _base(self, name: str, near: str) -> LibraryClass | None:
        """A base class named in the file ``near``; a module-level alias in the file it is imported
        from (``PretrainedConfig = PreTrainedConfig``) stands for the class it names."""
        found = self.find(name, near)
        module = self._imports.get(near, {}).get(name) if found is None else None
        if module is None:
            return found
        stem = "/" + module.lstrip(".").replace(".", "/") + ".py"
        for path, functions in self._functions.items():
            calls = functions.get(name) if path.endswith(stem) else None
            if calls is not None:
                self._read(files=(path,))
            if calls is not None and len(calls) == 1 and calls[0].callee.isidentifier():
                return self.find(calls[0].callee, path)
        return None

    def attribute(self, info: LibraryClass, name: str) -> Value:
        """The class-level value of ``name`` first found along the MRO, or :data:`MISSING`.

        A method of that name counts as found (its value is a function, never a literal).
        """
        ancestors = self.mro(info)  # read again for each call: it records what the value depends on
        key = (id(info), name)
        found = self._attributes.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self._attributes[key] = _first_attribute(ancestors, name)
        return found

    def instance_names(self, info: LibraryClass) -> tuple[frozenset[str], frozenset[str]]:
        """The names a class of the MRO's constructors keep as a set of the class value
        (``init_as_set``), and those they assign (``assigned_in_init``)."""
        ancestors = self.mro(info)  # read again for each call: it records what the value depends on
        found = self._instance_names.get(id(info))
        if found is None:
            found = self._instance_names[id(info)] = (
                frozenset(name for ancestor in ancestors for name in ancestor.init_as_set),
                frozenset(name for ancestor in ancestors for name in ancestor.assigned_in_init),
            )
        return found

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

    def mapping_entry(self, mapping: str, key: str) -> tuple[str, ...]:
        """The class names of the entry ``key`` of an auto mapping (none without it): a fact, so a new
        entry of the mapping concerns only the evaluations that asked for that entry."""
        return self.fact(_mapping_entry, mapping, key)

    def mapping_keys(self, mapping: str) -> frozenset[str] | None:
        entries = self.mappings.get(mapping)
        return None if entries is None else frozenset(key for key, _ in entries)


def _mapping_entry(library: Library, mapping: str, key: str) -> tuple[str, ...]:
    return dict(library.mappings.get(mapping, ())).get(key, ())


def _exists(library: Library, path: str) -> bool:
    library._read(texts=(path,))
    return library.root is not None and (library.root / path).is_file()


def _first_attribute(ancestors: tuple[LibraryClass, ...], name: str) -> Value:
    """The value of ``name`` in the first of ``ancestors`` that sets or defines it, or :data:`MISSING`."""
    for ancestor in ancestors:
        for key, value in ancestor.attributes:
            if key == name:
                return value
        if name in ancestor.methods:
            return MethodValue(ancestor.name, name)
    return MISSING
