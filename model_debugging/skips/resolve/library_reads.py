"""What an evaluation read in the library: recorded while it runs (:class:`LibraryReads`, filled by
:class:`~model_debugging.skips.resolve.library.Library`), kept frozen with its outcomes
(:class:`Reads`), so that a later scan evaluates again only what a library change concerns.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from model_debugging.skips.records.library import LibraryClass

FactKey = tuple[Hashable, ...]  # (the function computing the fact, its arguments)


@dataclass
class LibraryReads:
    """What one recording consulted (see the module docstring): ``files``, ``classes`` and
    ``mappings`` (an auto mapping, by name) through the records (what ``read_library_file`` keeps), ``texts`` as written, ``facts`` by value (their
    :func:`comparable` form) with, in ``fact_reads``, what computing each of them read."""

    files: set[str] = field(default_factory=set)
    classes: set[tuple[str, str]] = field(default_factory=set)  # (file, class name)
    names: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)
    mappings: set[str] = field(default_factory=set)  # auto mappings read whole, by name
    facts: dict[FactKey, object] = field(default_factory=dict)
    fact_reads: dict[FactKey, LibraryReads] = field(default_factory=dict)
    # keys of the kept reads (an MRO's, a memoized value's) already added here: added once, not on
    # every look-up (the evaluation looks MROs up hundreds of thousands of times)
    replayed: set[object] = field(default_factory=set, compare=False, repr=False)
    # a fact's reads are made once and handed to every model that asks for the fact: frozen once too
    # (a fact reading the 2,000 module files of models/ made each of 429 models a set of their names,
    # and the workers sent every one back)
    frozen: Reads | None = field(default=None, compare=False, repr=False)

    def replay(self, key: object, kept: LibraryReads) -> None:
        """Add ``kept``, the reads kept under ``key``, unless they were added here already."""
        if key not in self.replayed:
            self.replayed.add(key)
            self.add(kept)

    def add(self, other: LibraryReads) -> None:
        # most replayed reads (an MRO's) hold classes and names only: the empty sets cost nothing
        if other.files:
            self.files |= other.files
        if other.classes:
            self.classes |= other.classes
        if other.names:
            self.names |= other.names
        if other.texts:
            self.texts |= other.texts
        if other.mappings:
            self.mappings |= other.mappings
        if other.facts:
            self.facts.update(other.facts)
            self.fact_reads.update(other.fact_reads)

    def flat(self) -> LibraryReads:
        """These reads with those of the facts asked for folded in (and no facts): what a fact
        computed from other facts depends on."""
        flat = LibraryReads(
            set(self.files), set(self.classes), set(self.names), set(self.texts), set(self.mappings)
        )
        for reads in self.fact_reads.values():
            flat.add(reads)
        return flat


def comparable(value: object) -> Hashable:
    """``value`` in a form compared by content: a syntax tree as the digest of its dump (without
    positions), containers and dataclasses item by item. A library class is refused: one found
    again by value could be another file's."""
    if isinstance(value, LibraryClass):
        raise TypeError("a fact must not hand out a LibraryClass (compared by value, its file is lost)")
    if isinstance(value, ast.AST):
        return hashlib.sha256(ast.dump(value).encode()).hexdigest()
    if isinstance(value, (tuple, list)):
        return tuple(comparable(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(comparable(item) for item in value)
    if isinstance(value, dict):
        return tuple((key, comparable(item)) for key, item in value.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value).__qualname__, *(comparable(getattr(value, item.name)) for item in fields))
    if value is None or value is Ellipsis or isinstance(value, (str, int, float, complex, bytes)):
        return value
    raise TypeError(f"a fact's value must be data, not {type(value).__name__}")


@dataclass(frozen=True)
class Reads:
    """What one evaluation read in the library (frozen :class:`LibraryReads`): the files whose
    imports or functions it read, the classes (file, name), the files whose texts it read, the names
    it looked up, the auto mappings it read (by name), and the facts it asked for with their values. ``fact_reads``, what
    computing each fact read, travels with a model's reads until the memory keeps it once per fact."""

    files: frozenset[str] = frozenset()
    classes: frozenset[tuple[str, str]] = frozenset()
    names: frozenset[str] = frozenset()
    texts: frozenset[str] = frozenset()
    mappings: frozenset[str] = frozenset()
    facts: tuple[tuple[FactKey, Hashable], ...] = ()
    fact_reads: tuple[tuple[FactKey, Reads], ...] = ()

    @classmethod
    def of(cls, reads: LibraryReads) -> Reads:
        return cls(
            frozenset(reads.files),
            frozenset(reads.classes),
            frozenset(reads.names),
            frozenset(reads.texts),
            frozenset(reads.mappings),
            tuple(reads.facts.items()),
            tuple((key, cls._of_fact(fact)) for key, fact in reads.fact_reads.items()),
        )

    @classmethod
    def _of_fact(cls, reads: LibraryReads) -> Reads:
        """What computing a fact read, frozen once (the same :class:`LibraryReads` every time it is asked)."""
        if reads.frozen is None:
            reads.frozen = cls.of(reads)
        return reads.frozen

    def record_paths(self) -> set[str]:
        """The files whose records it read."""
        return set(self.files) | {path for path, _ in self.classes}

    def within(
        self, loaded: set[str], records: Mapping[str, str], defined_in: Mapping[str, tuple[str, ...]]
    ) -> bool:
        """Whether every library file read, and every file defining a name looked up, is in ``loaded``
        (``records``: every library file; other files, read as text, need no loading)."""
        return all(path in loaded for path in self.record_paths() if path in records) and all(
            loaded.issuperset(defined_in.get(name, ())) for name in self.names
        )

    def kept(self) -> Reads:
        """Without ``fact_reads`` (what the memory keeps per model)."""
        return dataclasses.replace(self, fact_reads=()) if self.fact_reads else self
