"""What a rescan must evaluate again after library files changed, and on which library files.

A changed file is compared with the record the evaluations read, part by part: its imports and
module functions as one part, each auto mapping by name, and each class by name (its line aside, unless the file
defines that name more than once). The facts (:meth:`~model_debugging.skips.resolve.library.Library.fact`)
whose computation read a changed part, text or name are computed again, on the files they read;
a model is evaluated again only when it read a changed part, text or name itself, or asked for a
fact whose value changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from model_debugging.skips.incremental.memory import (
    LibraryChanges,
    ModelEntry,
    ScanMemory,
    library_records,
)
from model_debugging.skips.records.library import LibraryClass, LibraryFile
from model_debugging.skips.resolve.library import Library
from model_debugging.skips.resolve.library_reads import FactKey, Reads
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.results.summary import TestSummary
from model_debugging.skips.work.entries import ParseCache


def library_changes(
    cache: ParseCache, memory: ScanMemory, changed: set[str], records: Mapping[str, LibraryFile]
) -> LibraryChanges:
    """The parts of the ``changed`` files that differ from the records the evaluations read, and the
    names that moved (``records``: the new records of the changed library files that still exist)."""
    defined_before: dict[str, set[str]] = {}
    for name, paths in memory.defined_in.items():
        for path in paths:
            if path in changed:
                defined_before.setdefault(path, set()).add(name)
    files: set[str] = set()
    classes: set[tuple[str, str]] = set()
    names: set[str] = set()
    mappings: set[str] = set()
    for path in changed:
        key = memory.record_keys.get(path)
        now = records.get(path)
        if key is None and now is None:
            continue  # no library file, before or now: only its text can have been read
        before = cache._load(key, LibraryFile) if key is not None else None
        names |= defined_before.get(path, set()) ^ (_defined(now) if now is not None else set())
        mappings |= _changed_mappings(before, now)
        if before is None or now is None:
            files.add(path)
            classes |= {(path, name) for name in defined_before.get(path, set()) | _defined(now)}
            continue
        if (before.imports, before.functions, before.error, before.always_imports, before.names) != (
            now.imports,
            now.functions,
            now.error,
            now.always_imports,
            now.names,
        ):
            files.add(path)
        before_classes, now_classes = _by_name(before), _by_name(now)
        classes |= {
            (path, name)
            for name in before_classes.keys() | now_classes.keys()
            if before_classes.get(name) != now_classes.get(name)
        }
    return LibraryChanges(
        frozenset(files),
        frozenset(classes),
        frozenset(changed),
        frozenset(names),
        mappings=frozenset(mappings),
    )


def _changed_mappings(before: LibraryFile | None, now: LibraryFile | None) -> set[str]:
    """The auto mappings whose entries (their order included) differ between two records of a file."""
    old = dict(before.mappings) if before is not None else {}
    new = dict(now.mappings) if now is not None else {}
    return {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}


def _defined(record: LibraryFile | None) -> set[str]:
    if record is None:
        return set()
    return {info.name for info in record.classes} | {name for name, _ in record.mappings}


def _by_name(record: LibraryFile) -> dict[str, tuple[tuple[LibraryClass, int], ...]]:
    """The classes of a record by name, compared by content; their line counts only where the file
    has several classes of that name (the line then says which one a method is read from)."""
    found: dict[str, list[LibraryClass]] = {}
    for info in record.classes:
        found.setdefault(info.name, []).append(info)
    return {
        name: tuple((info, info.line if len(infos) > 1 else 0) for info in infos)
        for name, infos in found.items()
    }


def name_index(
    memory: ScanMemory, changed: set[str], records: Mapping[str, LibraryFile], order: list[str]
) -> dict[str, tuple[str, ...]]:
    """Class or mapping name -> the files defining it after the change, in the library's file order."""
    index = {
        name: tuple(path for path in paths if path not in changed)
        for name, paths in memory.defined_in.items()
    }
    for record in records.values():
        for name in _defined(record):
            index[name] = (*index.get(name, ()), record.path)
    position = {path: number for number, path in enumerate(order)}
    return {
        name: tuple(sorted(paths, key=lambda path: position.get(path, len(position))))
        for name, paths in index.items()
        if paths
    }


def needed_files(reads: Iterable[Reads], index: Mapping[str, tuple[str, ...]]) -> set[str]:
    """The library files whose records ``reads`` read, or that define a name they looked up."""
    needed: set[str] = set()
    for read in reads:
        needed |= read.record_paths()
        for name in read.names:
            needed.update(index.get(name, ()))
    return needed


@dataclass
class RecordsAt:
    """The records of the library files a rescan loaded (read from the cache as first needed)."""

    repo: Path
    cache: ParseCache
    order: list[str]  # every library file, in the library's order
    records: dict[str, LibraryFile]

    def library(self, paths: Iterable[str]) -> tuple[Library, set[str]]:
        """A library of the records of ``paths`` (those that are library files), and those paths."""
        library_files = set(self.order)
        wanted = {path for path in paths if path in library_files}
        missing = wanted - self.records.keys()
        if missing:
            self.records.update(library_records(self.repo, self.cache, sorted(missing), {}))
        loaded = [path for path in self.order if path in wanted]
        return Library([self.records[path] for path in loaded], self.repo), set(loaded)


def recomputed_facts(
    memory: ScanMemory,
    changes: LibraryChanges,
    records: RecordsAt,
    index: Mapping[str, tuple[str, ...]],
    whole: Library | None = None,
) -> tuple[LibraryChanges, dict[FactKey, tuple[Hashable, Reads]]]:
    """``changes`` with the facts whose value changed, and every fact computed again (its new value
    and reads). A fact is computed again when what it read changed, on a library of the files it
    read plus the changed ones; on the whole library (``whole``, built when needed) when that is
    not enough."""
    stale = [key for key, (_, reads) in memory.facts.items() if touches(reads, changes)]
    if not stale:
        return changes, {}
    paths = needed_files((memory.facts[key][1] for key in stale), index) | set(changes.texts)
    library, loaded = records.library(paths) if whole is None else (whole, set(records.order))
    computed = {}
    for key in stale:
        with library.recording() as reads:
            library.fact(*key)
        computed[key] = (reads.facts[key], Reads.of(reads.fact_reads[key]))
    library_files = dict.fromkeys(records.order, "")
    if whole is None and not all(
        found.within(loaded, library_files, index) for _, found in computed.values()
    ):
        return recomputed_facts(memory, changes, records, index, records.library(records.order)[0])
    differ = frozenset(key for key in stale if computed[key][0] != memory.facts[key][0])
    return dataclasses.replace(changes, facts=differ), computed


def models_to_evaluate(memory: ScanMemory, changes: LibraryChanges) -> frozenset[str]:
    """The models that read a change."""
    return frozenset(model for model, entry in memory.models if touches(entry.reads, changes))


def causes_of(
    memory: ScanMemory,
    changes: LibraryChanges,
    dirty: frozenset[str],
    computed: Mapping[FactKey, tuple[Hashable, Reads]],
    index: Mapping[str, tuple[str, ...]],
) -> dict[str, tuple[str, ...]]:
    """Per model of ``dirty``, the changed library files behind its new evaluation: those whose
    changed class records, file records or texts it read, that define (or defined) a changed name it
    looked up, or from which a fact it asked for, whose value changed, was computed."""

    def touched(reads: Reads) -> set[str]:
        found = {path for path, name in reads.classes if (path, name) in changes.classes}
        found |= (reads.files & changes.files) | (reads.texts & changes.texts)
        for name in (reads.names & changes.names) | (reads.mappings & changes.mappings):
            found.update(memory.defined_in.get(name, ()), index.get(name, ()))
        for key, _ in reads.facts:
            if key in changes.facts:
                for fact_reads in (
                    memory.facts.get(key, (None, Reads()))[1],
                    computed.get(key, (None, Reads()))[1],
                ):
                    found |= fact_reads.record_paths() | fact_reads.texts
        return found & changes.texts  # every changed file is in ``texts``

    return {model: tuple(sorted(touched(entry.reads))) for model, entry in memory.models if model in dirty}


def files_to_load(
    memory: ScanMemory, dirty: frozenset[str], changed: Iterable[str], index: Mapping[str, tuple[str, ...]]
) -> set[str]:
    """The files the evaluation of the ``dirty`` models reads: those they read before (the facts
    they asked for included) and the ``changed`` ones."""
    reads = [entry.reads for model, entry in memory.models if model in dirty]
    asked = {key for read in reads for key, _ in read.facts}
    reads += [memory.facts[key][1] for key in asked if key in memory.facts]
    return needed_files(reads, index) | set(changed)


def refolded(previous: ScanResult, memory: ScanMemory, entries: Mapping[str, ModelEntry]) -> ScanResult:
    """``previous`` (the result of ``memory``) with the tests some model's outcome changed for folded
    again from ``entries``; every other test keeps its entry (folding all of them costs more than the
    evaluation of a model)."""
    changed = set()
    for model, entry in memory.models:
        new = entries[model]
        if new is not entry:
            pairs = enumerate(zip(entry.outcomes, new.outcomes, strict=True))
            changed.update(index for index, (old, now) in pairs if old != now)
    tests = {}
    for index, name in enumerate(memory.tests):
        if index not in changed:
            tests[name] = previous.tests[name]
            continue
        summary = TestSummary(previous.tests[name].origin)
        for model, entry in entries.items():
            summary.add(model, entry.outcomes[index])
        tests[name] = summary.result()
    return ScanResult(tests, previous.errors)


def touches(reads: Reads, changes: LibraryChanges) -> bool:
    """Whether ``reads`` read one of the parts of records, texts, names or facts that ``changes`` lists."""
    return (
        not reads.classes.isdisjoint(changes.classes)
        or not reads.files.isdisjoint(changes.files)
        or not reads.texts.isdisjoint(changes.texts)
        or not reads.names.isdisjoint(changes.names)
        or not reads.mappings.isdisjoint(changes.mappings)
        or any(key in changes.facts for key, _ in reads.facts)
    )
