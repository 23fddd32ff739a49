"""What a full scan keeps for the next one, so that a change re-evaluates only the models it concerns.

A full scan leaves a :class:`~model_debugging.skips.incremental.snapshot.ScanSnapshot` in the parse cache, found
again by the scan's settings and the content of the common test files (an exported copy of the same
tests, such as the PR check's base side, finds it too; so does a checkout whose model test files
differ), and beside it a :class:`ScanMemory`: each model's outcomes with the test modules its
evaluation looked up (its own files, the files they import, directly or not, found or not) and the
collection errors its files meet in them, what it read in the library (recorded by
:class:`~model_debugging.skips.resolve.library.Library` itself: the classes, the other parts of the
records, the texts and the names it read, and the facts it asked for with their values), and which
files define each name. The next scan returns the kept result when no test or library file it read
changed. Otherwise it evaluates again only the new models and those a change concerns: after test
files changed (``incremental/changed_tests.py``), those whose lookups now find another or a changed
file; after library files changed (``incremental/plan.py``), the models that read a changed class or
other part of a record (an edit of a comment or of a method body the reader skips changes none), the
text of a changed file, a name a changed record defines (or defined), or a fact whose value changed
(computed again when what it read changed: a forward's body edited without changing how it gates
the cache leaves its facts as they were). They run on a library of just the files they read before
plus the changed ones; if the new evaluation reads beyond those, it runs again on the whole library.
A change to a common test file (or to the settings) finds no memory: every model is evaluated.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from model_debugging.skips.incremental.snapshot import ScanSnapshot
from model_debugging.skips.incremental.stat_index import StatIndex
from model_debugging.skips.parse.library.load import _library_key, _read_batch, library_paths, library_root
from model_debugging.skips.records.library import LibraryFile
from model_debugging.skips.records.outcome import Outcome
from model_debugging.skips.records.test_file_index import TestFileIndex
from model_debugging.skips.records.test_files import ParseError
from model_debugging.skips.resolve.library_reads import FactKey, Reads
from model_debugging.skips.source.files import python_files, read_source
from model_debugging.skips.source.pytest_settings import PytestSettings
from model_debugging.skips.source.scanned_paths import package_depths
from model_debugging.skips.source.settings import ScanSettings
from model_debugging.skips.work.entries import ParseCache, analyzer_version, cache_key


@dataclass
class ScanStats:
    """What a scan did, for whoever passes one to ``scan_repository(stats=...)`` (benchmarks, tests).

    ``answer`` says where the result came from: ``"snapshot"`` as kept, ``"rescan"`` with only the
    models a change of test or library files concerns evaluated again, ``"full"`` scanned from the
    test files. After a rescan, ``library_causes`` gives each model a library change concerns the
    changed library files it read (their records, texts or defined names, or the facts computed from
    them whose value changed).
    """

    answer: Literal["snapshot", "rescan", "full"] = "full"
    models_evaluated: int = 0
    library_files_loaded: int = 0
    library_causes: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LibraryChanges:
    """What a rescan found changed: the files whose imports or functions changed (or that came or
    went), the classes (file, name) whose records changed, the files whose text changed, the names
    some file gained or lost, the facts whose value changed, and the auto mappings (by name) whose
    entries changed in some file."""

    files: frozenset[str] = frozenset()
    classes: frozenset[tuple[str, str]] = frozenset()
    texts: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    facts: frozenset[FactKey] = frozenset()
    mappings: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ModelEntry:
    """One model's outcomes (in the order of :attr:`ScanMemory.tests`), what they read in the
    library, the test modules its evaluation looked up (found or not) and the collection errors its
    files meet in the files they import."""

    outcomes: tuple[Outcome, ...]
    reads: Reads
    modules: frozenset[str] = frozenset()
    errors: tuple[ParseError, ...] = ()


@dataclass(frozen=True)
class ScanMemory:
    """Per model, what a full scan found and read; ``facts`` the value of every fact some model asked for and what computing it read;
    ``test_files`` the test files the scan held (what each model's lookups found).

    The models' outcomes are kept apart, under ``outcomes_key`` (see :func:`keep_memory`): a
    rescan that evaluates no model again neither reads nor writes them.
    """

    tests: tuple[str, ...]
    models: tuple[tuple[str, ModelEntry], ...]
    defined_in: dict[str, tuple[str, ...]]  # class or mapping name -> library files defining it
    record_keys: dict[str, str]  # library file -> the cache key of the record the evaluations read
    facts: dict[FactKey, tuple[Hashable, Reads]]
    test_files: TestFileIndex
    outcomes_key: str = ""

    @classmethod
    def of(
        cls,
        tests: tuple[str, ...],
        models: Iterable[tuple[str, ModelEntry]],
        defined_in: dict[str, tuple[str, ...]],
        record_keys: dict[str, str],
        test_files: TestFileIndex,
        facts: Mapping[FactKey, tuple[Hashable, Reads]] = MappingProxyType({}),
    ) -> ScanMemory:
        """The memory of these entries: the reads of each fact (those of ``facts``, updated by those the
        entries bring) kept once, for the facts some entry asked for."""
        table = dict(facts)
        entries = []
        for model, entry in models:
            values = dict(entry.reads.facts)
            table.update((key, (values[key], reads)) for key, reads in entry.reads.fact_reads)
            entries.append((model, dataclasses.replace(entry, reads=entry.reads.kept())))
        asked = {key for _, entry in entries for key, _ in entry.reads.facts}
        table = {key: found for key, found in table.items() if key in asked}
        return cls(tests, tuple(entries), defined_in, record_keys, table, test_files)

    def all_reads(self) -> list[Reads]:
        return [*(entry.reads for _, entry in self.models), *(r for _, r in self.facts.values())]


@dataclass(frozen=True)
class KeptOutcomes:
    """The outcomes of a :class:`ScanMemory`'s models, in its model order."""

    outcomes: tuple[tuple[Outcome, ...], ...]


def keep_memory(cache: ParseCache, key: str, memory: ScanMemory, outcomes_key: str | None = None) -> None:
    """Store ``memory`` under ``key``, its outcomes apart: under a key made from their content (a
    memory never points at outcomes written for another), or under ``outcomes_key`` when they are
    those already kept there."""
    if outcomes_key is None:
        outcomes = KeptOutcomes(tuple(entry.outcomes for _, entry in memory.models))
        outcomes_key = cache_key("outcomes", pickle.dumps(outcomes, protocol=pickle.HIGHEST_PROTOCOL))
        cache.put_entry(outcomes_key, outcomes)
    models = tuple((model, dataclasses.replace(entry, outcomes=())) for model, entry in memory.models)
    cache.put_entry(key, dataclasses.replace(memory, models=models, outcomes_key=outcomes_key))


def with_outcomes(cache: ParseCache, memory: ScanMemory) -> ScanMemory | None:
    """``memory`` with its models' outcomes read back; None when they are gone."""
    kept = cache.get_entry(memory.outcomes_key, KeptOutcomes) if memory.outcomes_key else None
    if kept is None or len(kept.outcomes) != len(memory.models):
        return None
    models = tuple(
        (model, dataclasses.replace(entry, outcomes=outcomes))
        for (model, entry), outcomes in zip(memory.models, kept.outcomes, strict=True)
    )
    return dataclasses.replace(memory, models=models)


@dataclass(frozen=True)
class Checkout:
    """The content keys of the scanned files: ``lookup`` finds the snapshot of a scan with the same
    settings and common test files (its model test files may differ)."""

    lookup: str
    test_keys: dict[str, tuple[str, int]]  # of the common and model test files, with their package depths
    library_keys: dict[str, str] | None  # None: no library sources
    # the stat index, which keys the files read as text too (``__init__.py``, ``models/**``)
    index: StatIndex | None = field(default=None, compare=False, repr=False)

    @classmethod
    def read(
        cls,
        repo: Path,
        paths: list[str],
        common: list[str],
        settings: ScanSettings,
        pytest: PytestSettings,
        cache: ParseCache,
    ) -> Checkout:
        """The keys of ``paths`` (the test files, ``common`` among them) and of the library's files,
        through the stat index kept in ``cache`` (kept again by :meth:`save_index`)."""
        index = StatIndex.load(cache, repo)
        # which folders are packages decides whether relative imports work (see parse/record_store.py)
        depths = package_depths(repo, paths)
        keys = {path: (index.key(path, read_source), depth) for path, depth in depths.items()}
        root = library_root(repo)
        library_keys = None
        if root is not None:
            library_keys = {path: index.key(path, Path.read_bytes) for path in library_paths(repo, root)}
        common_keys = [(path, keys[path]) for path in common]
        lookup = cache_key(
            "snapshot",
            repr((analyzer_version(), settings, pytest, library_keys is None, common_keys)).encode(),
        )
        return cls(lookup, keys, library_keys, index)

    def save_index(self) -> None:
        """Keep the stat index, with the keys of the files asked for since it was read."""
        if self.index is not None:
            self.index.save()

    def file_key(self, repo: Path, path: str) -> str:
        """:func:`file_key` of a file read as text, through the stat index (a settled file is not
        read again; a missing file or a folder is "", as there)."""
        if self.index is None or path.endswith("/"):
            return file_key(repo, path)
        return self.index.key(path, Path.read_bytes)


def kept_snapshot(snapshot: ScanSnapshot | None, checkout: Checkout) -> ScanSnapshot | None:
    """The snapshot, if it was made with the library as present as it is now."""
    if snapshot is None or (snapshot.library_keys is None) != (checkout.library_keys is None):
        return None
    return snapshot


def changed_test_files(repo: Path, snapshot: ScanSnapshot, checkout: Checkout) -> set[str]:
    """The test files added, removed or edited since the snapshot: among the common and model test
    files, and the other files under the test folders that scan read (testers, helpers)."""
    before = {path: (key, depth) for path, key, depth in snapshot.test_keys}
    changed = {path for path, found in checkout.test_keys.items() if before.get(path) != found}
    others = [path for path in before if path not in checkout.test_keys]
    for path, depth in package_depths(repo, others).items():
        try:
            now = (cache_key(path, read_source(repo / path)), depth)
        except OSError:
            now = ("", depth)
        if now != before[path]:
            changed.add(path)
    return changed


def changed_library_files(repo: Path, snapshot: ScanSnapshot, checkout: Checkout) -> set[str]:
    """Library files added, removed or edited since the snapshot; also the other files of the
    checkout some evaluation read as text (``inspect.getfile`` of a library class, ...)."""
    before, now = dict(snapshot.library_keys or ()), dict(checkout.library_keys or {})
    for path in before.keys() - now.keys():
        now[path] = checkout.file_key(repo, path)
    return {path for path in before.keys() | now.keys() if before.get(path) != now.get(path)}


def file_key(repo: Path, path: str) -> str:
    """The content key of a file ("" when it cannot be read); of a folder's listing for a path
    ending in ``/`` (:meth:`~model_debugging.skips.resolve.library.Library.listing`)."""
    if path.endswith("/"):
        return cache_key(path, "\n".join(python_files(repo, path.removesuffix("/"))).encode())
    if not os.path.isfile(repo / path):
        return ""
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
    read_paths: set[str] = set()
    for read in reads:
        read_paths |= read.files
        read_paths |= read.texts
        read_paths.update(path for path, _ in read.classes)
    for path in sorted(read_paths - keys.keys()):
        keys[path] = checkout.file_key(repo, path)
    checkout.save_index()
    return tuple(keys.items())


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
