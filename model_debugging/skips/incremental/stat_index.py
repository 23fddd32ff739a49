"""The content keys of a checkout's files, remembered with each file's ``stat`` so that a warm scan
does not read and hash every file again, as git's index does.

An entry is used only while the file's size, modification and change times and inode are those
seen when it was hashed, and only if the file was already :data:`SETTLED_NS` old then: a file
written again within the same tick of a coarse clock keeps its times, so a key taken while it was
that young could be stale (git's "racily clean" entries). A key read from the index is the key that
hashing the file would give; a stale or damaged index costs speed only. One entry of the cache
holds the indexes of the few checkouts scanned last.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from model_debugging.skips.work.entries import ParseCache, cache_key

SETTLED_NS = 2_000_000_000  # the coarsest file-time tick in use (FAT): 2 s
CHECKOUTS_KEPT = 4

_Stat = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


@dataclass(frozen=True)
class _Indexes:
    """checkout root -> (path -> (stat, key)), the most recently used checkout last."""

    checkouts: dict[str, dict[str, tuple[_Stat, str]]]


@dataclass
class StatIndex:
    """Content keys of one checkout's files: :meth:`key` hashes a file only when its ``stat`` is new."""

    cache: ParseCache
    repo: Path
    entries: dict[str, tuple[_Stat, str]] = field(default_factory=dict)
    changed: bool = False
    asked: set[str] = field(default_factory=set)

    @classmethod
    def load(cls, cache: ParseCache, repo: Path) -> StatIndex:
        kept = cache.get_entry(_index_key(), _Indexes)
        entries = kept.checkouts.get(_root(repo), {}) if kept is not None else {}
        return cls(cache, repo, dict(entries))

    def key(self, path: str, read: Callable[[Path], bytes]) -> str:
        """``cache_key(path, read(file))``, or "" when the file cannot be read (``OSError``)."""
        self.asked.add(path)
        try:
            status = os.stat(os.path.join(self.repo, path))
        except OSError:
            return ""
        seen = (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
        entry = self.entries.get(path)
        if entry is not None and entry[0] == seen:
            return entry[1]
        hashed_at = time.time_ns()
        try:
            key = cache_key(path, read(self.repo / path))
        except OSError:
            return ""
        if max(seen[1], seen[2]) + SETTLED_NS < hashed_at:
            self.entries[path] = (seen, key)
            self.changed = True
        return key

    def save(self) -> None:
        """Keep the index, of the files asked for, when it changed (for this checkout among the last
        few scanned)."""
        if not self.changed and self.asked >= self.entries.keys():
            return
        self.entries = {path: entry for path, entry in self.entries.items() if path in self.asked}
        kept = self.cache.get_entry(_index_key(), _Indexes)
        checkouts = dict(kept.checkouts) if kept is not None else {}
        checkouts.pop(_root(self.repo), None)
        checkouts[_root(self.repo)] = self.entries
        recent = dict(list(checkouts.items())[-CHECKOUTS_KEPT:])
        self.cache.put_entry(_index_key(), _Indexes(recent))
        self.changed = False


def _index_key() -> str:
    return cache_key("stat index", b"")  # the analyzer's version is part of every key


def _root(repo: Path) -> str:
    return os.path.realpath(repo)
