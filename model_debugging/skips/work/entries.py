"""Entries kept on disk between runs and between processes, keyed by a hash of the analyzer's sources,
a name and a content: the records of each parsed file (test files and library files), the common
files' definitions, and what ``skips/incremental/`` keeps of a whole scan.

One pickle per entry under the cache directory. A missing, damaged or stale entry (another
analyzer's, other key) is a miss, rebuilt by whoever asked; an entry is written to a temporary file renamed
over its name, so a concurrent or interrupted run never leaves a half-written entry behind. A scan
run without cache keeps its entries in a scratch folder (:class:`ScratchCache`): they are how the
records of files a model no longer needs leave memory.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import re
from pathlib import Path
from typing import Any

from model_debugging.reporting.atomic import atomic_write_with
from model_debugging.skips.records.test_files import ParsedFile
from model_debugging.skips.work.collector import collector_paused

# Why an entry may not be written: an unwritable cache, or a value (notes an evaluation left on
# syntax trees) that does not pickle.
_UNSTORABLE = (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError)


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/model-debugging/scan``, else ``~/.cache/model-debugging/scan``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "model-debugging" / "scan"


def cache_key(path: str, data: bytes) -> str:
    """The key of ``path``'s entry: a changed analyzer (a parse rule, a record) never reads an entry
    an older one wrote, whether or not anyone remembered to say so."""
    digest = hashlib.sha256()
    digest.update(f"{analyzer_version()}\0{path}\0".encode())
    digest.update(data)
    return digest.hexdigest()


def entry_bytes(key: str, value: Any) -> bytes:
    """A cache entry: ``(key, value)`` pickled (:meth:`ParseCache.put_bytes` writes it as it is)."""
    return pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)


def entry_for_parent(cache: ParseCache | None, key: str, record: Any) -> bytes:
    """In a worker process: ``record``'s entry, also written to ``cache`` when the record holds no
    error; the parent only unpickles the bytes (:func:`entry_value`)."""
    data = entry_bytes(key, record)
    if cache is not None and record.error is None:
        cache.put_bytes(key, data)
    return data


def entry_value(data: bytes) -> Any:
    """The value of an entry made by :func:`entry_bytes`."""
    with collector_paused():  # unpickling makes many small objects that live on
        return pickle.loads(data)[1]


# an import of one of the project's modules outside the analyzer: ``from model_debugging.assertions
# import ...`` (the project imports its modules only this way; the analyzer's own are all read)
_PROJECT_IMPORT = re.compile(rb"model_debugging\.(?!skips\b)([\w.]+) import\b")
_REPORTS = "report"  # skips/report/: the trend report and the PR check, made from results


@functools.cache
def analyzer_version() -> str:
    """A digest of the analyzer's own sources: what an entry derived from an evaluation is keyed on
    beside its inputs, so that a changed evaluator never answers from what an older one decided."""
    project = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    digest = hashlib.sha256()
    for path, text in sorted(_analyzer_sources(project).items()):
        digest.update(path.encode())
        digest.update(text)
    return digest.hexdigest()


def _analyzer_sources(project: str) -> dict[str, bytes]:
    """The text of every module of ``model_debugging/skips`` but its reports (``skips/report/``, which
    read results and decide no verdict: a reworded PR check is no other analyzer) and of every other
    module of the project they import, directly or not (``model_debugging/assertions.py`` decides what
    a test checks), by their paths relative to ``project`` (with ``/``). Read with ``os`` rather than
    ``pathlib``, which made this a tenth of a warm scan."""
    skips = os.path.join(project, "skips")
    sources = {
        os.path.relpath(os.path.join(folder, name), project).replace(os.sep, "/"): _read(folder, name)
        for folder, _, names in os.walk(skips)
        if os.path.relpath(folder, skips).split(os.sep)[0] != _REPORTS
        for name in names
        if name.endswith(".py")
    }
    pending = {dotted for text in sources.values() for dotted in _PROJECT_IMPORT.findall(text)}
    seen: set[bytes] = set()
    while pending:
        dotted = pending.pop()
        seen.add(dotted)
        module = dotted.decode().replace(".", "/")
        for path in (f"{module}.py", f"{module}/__init__.py"):
            if path not in sources and os.path.isfile(os.path.join(project, path)):
                sources[path] = text = _read(project, path)
                pending |= set(_PROJECT_IMPORT.findall(text)) - seen
    return sources


def _read(folder: str, name: str) -> bytes:
    with open(os.path.join(folder, name), "rb") as file:
        return file.read()


class ParseCache:
    """Per-file :class:`ParsedFile` entries, and entries of any other kind (:meth:`get_entry`).

    The getters return None for a missing, damaged or mismatching entry.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"

    def _load(self, key: str, kind: type) -> Any:
        try:  # unpickling makes many small objects that live on
            with collector_paused(), open(self._entry(key), "rb") as handle:
                stored_key, value = pickle.load(handle)
        except Exception:  # missing or damaged: only a cache miss
            return None
        return value if stored_key == key and isinstance(value, kind) else None

    def _store(self, key: str, value: Any) -> None:
        with contextlib.suppress(*_UNSTORABLE):  # an entry not written only costs speed next time
            self._write(key, entry_bytes(key, value))

    def put_bytes(self, key: str, data: bytes) -> None:
        """Write an entry already pickled by :func:`entry_bytes` (by a worker process, which sends
        the parent the same bytes: the parent then neither pickles the value nor writes the file)."""
        with contextlib.suppress(OSError):
            self._write(key, data)

    def _write(self, key: str, data: bytes) -> None:
        """Published whole under its name, not synced to disk: an entry a power cut damages or
        empties fails to load and is rebuilt (syncing each of a cold scan's thousand-odd entries cost
        more than a second)."""
        path = self._entry(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_with(path, lambda temporary: temporary.write_bytes(data), durable=False)

    def get(self, key: str) -> ParsedFile | None:
        return self._load(key, ParsedFile)

    def put(self, key: str, parsed: ParsedFile) -> None:
        self._store(key, parsed)

    def get_entry(self, key: str, kind: type) -> Any:
        """Any other entry of type ``kind`` (None when missing, damaged or of another type)."""
        return self._load(key, kind)

    def put_entry(self, key: str, value: object) -> None:
        self._store(key, value)


class ScratchCache(ParseCache):
    """A :class:`ParseCache` for one scan only (a temporary folder): entries are written without fsync."""

    def _write(self, key: str, data: bytes) -> None:
        entry = self._entry(key)
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_bytes(data)
