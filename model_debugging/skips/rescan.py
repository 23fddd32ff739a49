"""What a full scan keeps for the next one, so that a library change re-evaluates only what read it.

A full scan leaves a :class:`~model_debugging.skips.cache.ScanSnapshot` in the parse cache, found
again by the content of the test files it scanned (an exported copy of the same tests, such as the
PR check's base side, finds it too), and beside it a :class:`ScanMemory`: each model's outcomes
with what their evaluation read in the library (files and names, recorded by
:class:`~model_debugging.skips.library.index.Library` itself), and which files define each name.
The next scan of the same test files then returns the result as it is when no library file
changed either, and otherwise re-evaluates only the models that read the record of a file whose
record changed (an edit of a comment or of a method body the reader skips leaves it equal), the
text of a changed file, or looked up a name a changed record defines (or defined). They run on a
library of just the files they read before plus the changed ones; if the new evaluation reads
beyond those, it runs again on the whole library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from model_debugging.skips.cache import ParseCache, ScanSnapshot, analyzer_version, cache_key
from model_debugging.skips.library.index import LibraryReads
from model_debugging.skips.library.load import _library_key, _read_batch, library_paths, library_root
from model_debugging.skips.library.records import LibraryFile
from model_debugging.skips.outcome import Outcome
from model_debugging.skips.settings import ScanSettings
from model_debugging.skips.source_files import read_source


@dataclass
class ScanStats:
    """What a scan did, for whoever passes one to ``scan_repository(stats=...)`` (benchmarks, tests).

    ``answer`` says where the result came from: ``"snapshot"`` as kept, ``"rescan"`` with only the
    models a library change concerns evaluated again, ``"full"`` scanned from the test files.
    """

    answer: Literal["snapshot", "rescan", "full"] = "full"
    models_evaluated: int = 0
    library_files_loaded: int = 0


@dataclass(frozen=True)
class Reads:
    """What one evaluation read in the library: the files whose records and whose texts it read, and
    the names it looked up (frozen)."""

    files: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    texts: frozenset[str] = frozenset()

    @classmethod
    def of(cls, reads: LibraryReads) -> Reads:
        return cls(frozenset(reads.files), frozenset(reads.names), frozenset(reads.texts))

    def touches(self, records: Iterable[str], texts: Iterable[str], names: Iterable[str]) -> bool:
        """Whether it read one of the changed ``records``, one of the changed ``texts``, or one of ``names``."""
        return (
            not self.files.isdisjoint(records)
            or not self.texts.isdisjoint(texts)
            or not self.names.isdisjoint(names)
        )

    def within(
        self, loaded: set[str], records: Mapping[str, str], defined_in: Mapping[str, tuple[str, ...]]
    ) -> bool:
        """Whether every library file read, and every file defining a name looked up, is in ``loaded``
        (``records``: every library file; other files, read as text, need no loading)."""
        return all(path in loaded for path in self.files if path in records) and all(
            loaded.issuperset(defined_in.get(name, ())) for name in self.names
        )


@dataclass(frozen=True)
class ModelEntry:
    """One model's outcomes (in the order of :attr:`ScanMemory.tests`) and what they read."""

    outcomes: tuple[Outcome, ...]
    reads: Reads


@dataclass(frozen=True)
class ScanMemory:
    """Per model, what a full scan found and read; ``shared`` is what every model depends on."""

    tests: tuple[str, ...]
    models: tuple[tuple[str, ModelEntry], ...]
    shared: Reads
    defined_in: dict[str, tuple[str, ...]]  # class or mapping name -> library files defining it
    record_keys: dict[str, str]  # library file -> the cache key of the record the evaluations read


@dataclass(frozen=True)
class Checkout:
    """The content keys of the scanned files: ``lookup`` finds the snapshot of the same test files."""

    lookup: str
    test_keys: dict[str, str]  # of the common and model test files (``lookup`` is made from them)
    library_keys: dict[str, str] | None  # None: no library sources

    @classmethod
    def read(cls, repo: Path, paths: list[str], settings: ScanSettings) -> Checkout:
        keys = []
        for path in paths:
            try:
                keys.append((path, cache_key(path, read_source(repo / path))))
            except OSError:
                keys.append((path, ""))
        root = library_root(repo)
        library_keys = None
        if root is not None:
            library_keys = {path: file_key(repo, path) for path in library_paths(repo, root)}
        lookup = cache_key(
            "snapshot", repr((analyzer_version(), settings, library_keys is None, keys)).encode()
        )
        return cls(lookup, dict(keys), library_keys)


def valid_snapshot(repo: Path, snapshot: ScanSnapshot | None, checkout: Checkout) -> ScanSnapshot | None:
    """The snapshot if every test file it read still has the same content and the library is as present."""
    if snapshot is None or (snapshot.library_keys is None) != (checkout.library_keys is None):
        return None
    for path, key in snapshot.test_keys:
        if path in checkout.test_keys:  # part of the lookup key: the same by construction
            continue
        try:
            data = read_source(repo / path)
        except OSError:
            return None
        if cache_key(path, data) != key:
            return None
    return snapshot


def changed_library_files(repo: Path, snapshot: ScanSnapshot, checkout: Checkout) -> set[str]:
    """Library files added, removed or edited since the snapshot; also the other files of the
    checkout some evaluation read as text (``inspect.getfile`` of a library class, ...)."""
    before, now = dict(snapshot.library_keys or ()), dict(checkout.library_keys or {})
    for path in before.keys() - now.keys():
        now[path] = file_key(repo, path)
    return {path for path in before.keys() | now.keys() if before.get(path) != now.get(path)}


def file_key(repo: Path, path: str) -> str:
    """The content key of a file ("" when it cannot be read)."""
    try:
        return cache_key(path, (repo / path).read_bytes())
    except OSError:
        return ""


def snapshot_library_keys(
    repo: Path, checkout: Checkout, reads: Iterable[Reads]
) -> tuple[tuple[str, str], ...] | None:
    """The library's keys for a snapshot: its files', and those of the other files ``reads`` read."""
    if checkout.library_keys is None:
        return None
    keys = dict(checkout.library_keys)
    for read in reads:
        for path in (read.files | read.texts) - keys.keys():
            keys[path] = file_key(repo, path)
    return tuple(keys.items())


def defined_names(record: LibraryFile) -> set[str]:
    return {info.name for info in record.classes} | {name for name, _ in record.mappings}


@dataclass(frozen=True)
class RescanPlan:
    """Which models to evaluate again, and the library files to load for them."""

    dirty: frozenset[str]
    load: tuple[str, ...]  # in the library's file order
    defined_in: dict[str, tuple[str, ...]]  # the name index after the change


def changed_records(
    cache: ParseCache, memory: ScanMemory, changed: set[str], records: Mapping[str, LibraryFile]
) -> set[str]:
    """The changed files whose record is not the one the evaluations read: added, removed, or read
    differently (``records``: the new records of the changed library files that still exist)."""
    differ = set()
    for path in changed:
        key = memory.record_keys.get(path)
        if key is None and path not in records:
            continue  # no library file, before or now: only its text can have been read
        before = cache._load(key, LibraryFile) if key is not None else None
        if before is None or before != records.get(path):
            differ.add(path)
    return differ


def plan_rescan(
    memory: ScanMemory,
    changed: set[str],
    records_changed: set[str],
    records: Mapping[str, LibraryFile],
    order: list[str],
) -> RescanPlan:
    """``changed``: the files whose content changed; ``records_changed``: those among them whose record
    changed (see :func:`changed_records`); ``records``: the new records of the changed files that still
    exist.

    Every model is dirty when what all of them read changed (the auto mappings, ...).
    """
    names = _names_moved(memory, records_changed, records)
    index = {
        name: tuple(path for path in paths if path not in changed)
        for name, paths in memory.defined_in.items()
    }
    for record in records.values():
        for name in defined_names(record):
            index[name] = (*index.get(name, ()), record.path)
    position = {path: number for number, path in enumerate(order)}
    index = {
        name: tuple(sorted(paths, key=lambda path: position.get(path, len(position))))
        for name, paths in index.items()
        if paths
    }
    if memory.shared.touches(records_changed, changed, names):
        dirty = frozenset(model for model, _ in memory.models)
    else:
        dirty = frozenset(
            model for model, entry in memory.models if entry.reads.touches(records_changed, changed, names)
        )
    load = set(memory.shared.files) | set(records)
    for model, entry in memory.models:
        if model in dirty:
            load |= entry.reads.files
            for name in entry.reads.names:
                load.update(index.get(name, ()))
    return RescanPlan(dirty, tuple(path for path in order if path in load), index)


def _names_moved(
    memory: ScanMemory, records_changed: set[str], records: Mapping[str, LibraryFile]
) -> set[str]:
    """The names a changed record gained or lost: only their lookups can find another file now (a
    name still defined where it was is found in the same file, whose record its readers read too)."""
    before: dict[str, set[str]] = {path: set() for path in records_changed}
    for name, paths in memory.defined_in.items():
        for path in paths:
            if path in before:
                before[path].add(name)
    moved: set[str] = set()
    for path, names in before.items():
        moved |= names ^ (defined_names(records[path]) if path in records else set())
    return moved


def library_records(
    repo: Path, cache: ParseCache, paths: Iterable[str], record_keys: dict[str, str]
) -> dict[str, LibraryFile]:
    """The records of ``paths``: from the library cache, else read now (and cached). The cache key of
    each record kept goes to ``record_keys``."""
    found: dict[str, LibraryFile] = {}
    cold: list[tuple[str, str]] = []
    for path in paths:
        try:
            key = _library_key(path, (repo / path).read_bytes())
        except OSError:
            key = ""
        hit = cache._load(key, LibraryFile) if key else None
        if hit is not None:
            found[path], record_keys[path] = hit, key
        else:
            cold.append((path, key))
    for (path, key), record in zip(cold, _read_batch(repo, [path for path, _ in cold]), strict=True):
        if key and record.error is None:
            cache._store(key, record)
            record_keys[path] = key
        found[path] = record
    return found
