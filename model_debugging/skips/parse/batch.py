"""Read and parse many files: cached results first, then the rest in parallel processes."""

from __future__ import annotations

import importlib
import os
from collections.abc import Container, Iterable, Iterator
from pathlib import Path

from model_debugging.skips.records.test_files import ParsedFile, ParseError
from model_debugging.skips.source.files import read_source
from model_debugging.skips.work.collector import collector_paused
from model_debugging.skips.work.entries import ParseCache, cache_key, entry_for_parent, entry_value
from model_debugging.skips.work.pool import worker_pool
from model_debugging.skips.work.progress import Phase

# Below this many cold files, starting worker processes costs more than it saves.
_PARALLEL_THRESHOLD = 8


def record_key(path: str, data: bytes, elide: bool, test: str | None = None) -> str:
    """The cache key of the record of ``path`` holding ``data``: a record made for one test (see
    ``parse/other_tests.py``) is never found for another test or a full scan."""
    parts = [path, *(["elided"] if elide else []), *([f"for {test}"] if test is not None else [])]
    return cache_key("\0".join(parts), data)


def _parse_worker(repo: Path, path: str, elide: bool, test: str | None) -> tuple[ParsedFile, str | None]:
    """Read and parse one file; the record and the cache key of the content it read (None if unreadable).

    The worker reads the file itself, so the contents of thousands of cold files never wait in the
    parent's memory (nor in the executor's queue) at once.
    """
    from model_debugging.skips.parse.test_file import parse_bytes  # libcst is imported only when parsing

    try:
        data = read_source(repo / path)
    except OSError as error:
        return ParsedFile(path, error=ParseError(path, 1, f"cannot read: {error.strerror}")), None
    key = record_key(path, data, elide, test)
    try:
        with collector_paused():  # the syntax tree is freed as a whole once its record is made
            return parse_bytes(data, path, elide, test), key
    except Exception as error:  # a crash on one file is that file's error, never the run's
        crash = ParseError(path, 1, f"parser crashed: {type(error).__name__}: {error}")
        return ParsedFile(path, error=crash), key


def _parse_worker_pickled(
    repo: Path, path: str, elide: bool, test: str | None, cache: ParseCache | None
) -> tuple[bytes, str | None]:
    """In a worker process: :func:`_parse_worker`'s record as a cache entry, also written to ``cache``
    when parsed without error: the parent only unpickles it."""
    record, key = _parse_worker(repo, path, elide, test)
    return entry_for_parent(cache, key or "", record), key  # no key: an unreadable file's error record


def _parse_here(
    repo: Path, path: str, elide: bool, test: str | None, cache: ParseCache | None
) -> tuple[ParsedFile, str | None]:
    record, key = _parse_worker(repo, path, elide, test)
    if cache is not None and record.error is None and key is not None:
        cache.put(key, record)
    return record, key


def iter_parsed(
    repo: Path,
    paths: Iterable[str],
    *,
    cache: ParseCache | None,
    jobs: int | None = None,
    phase: Phase | None = None,
    keys: dict[str, str] | None = None,
    elide: Container[str] = (),
    test: str | None = None,
) -> Iterator[tuple[str, ParsedFile, str | None]]:
    """Parse ``paths`` (relative to ``repo``), yielding ``(path, record, cache key of the record)``.

    Unreadable files come back as error records. The content key of every file read is added to
    ``keys`` when given. Files in ``elide`` are parsed without the code the scanner never reads
    (``parse/elide.py``); with ``test``, every file is parsed without the tests a verdict on that
    test never reads (``parse/other_tests.py``), unless the cache holds its record for every test. Cached records come first, then the cold files as their parsing ends; the caller may drop each
    record once it has used it. The key is None when the file could not be read. ``phase`` counts
    the files parsed and those taken from the cache.
    """
    cold: list[tuple[str, int]] = []  # (path, size): the contents are read again by the parser
    for path in paths:
        try:
            data = read_source(repo / path)
        except OSError as error:
            yield path, ParsedFile(path, error=ParseError(path, 1, f"cannot read: {error.strerror}")), None
            continue
        if keys is not None:
            keys[path] = cache_key(path, data)
        key = record_key(path, data, path in elide, test)
        hit = cache.get(key) if cache is not None else None
        if hit is None and cache is not None and test is not None:
            key_for_all = record_key(path, data, path in elide)  # a full scan's record serves every test
            hit = cache.get(key_for_all)
            key = key_for_all if hit is not None else key
        if hit is not None:
            if phase is not None:
                phase.tally("from the cache", 1)
            yield path, hit, key
        else:
            cold.append((path, len(data)))
    if not cold:
        return
    if phase is not None:
        phase.add(len(cold))
    cold.sort(key=lambda item: item[1], reverse=True)  # big files first balances the workers
    jobs = jobs or os.cpu_count() or 1
    executor = None
    if jobs > 1 and len(cold) >= _PARALLEL_THRESHOLD:
        # imported once, before the workers fork, rather than by each worker (0.3 s of CPU each)
        importlib.import_module("model_debugging.skips.parse.test_file")
        executor = worker_pool(min(jobs, len(cold)))
    arguments = (
        [repo] * len(cold),
        [path for path, _ in cold],
        [path in elide for path, _ in cold],
        [test] * len(cold),
        [cache] * len(cold),
    )
    if executor is not None:
        results = ((entry_value(data), key) for data, key in executor.map(_parse_worker_pickled, *arguments))
    else:
        results = map(_parse_here, *arguments)
    try:
        for (path, _), (result, key) in zip(cold, results, strict=True):
            if phase is not None:
                phase.advance()
            yield path, result, key
    finally:
        if executor is not None:
            executor.shutdown()
