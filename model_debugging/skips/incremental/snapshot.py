"""A whole scan's answer kept in the cache, found again by its settings and common test files."""

from __future__ import annotations

from dataclasses import dataclass

from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.work.entries import ParseCache, cache_key


@dataclass(frozen=True)
class ScanSnapshot:
    """A whole scan's answer, the content keys of every file it read (the test files' with their
    package depths), and where its :class:`~model_debugging.skips.incremental.memory.ScanMemory` is
    kept (``memory_key``)."""

    test_keys: tuple[tuple[str, str, int], ...]  # (path, content key, package depth)
    library_keys: tuple[tuple[str, str], ...] | None  # None: the checkout had no library sources
    result: ScanResult
    memory_key: str


def get_snapshot(cache: ParseCache, key: str) -> ScanSnapshot | None:
    return cache.get_entry(key, ScanSnapshot)


def put_snapshot(cache: ParseCache, key: str, snapshot: ScanSnapshot) -> None:
    cache.put_entry(key, snapshot)


def single_test_key(lookup: str, test_name: str) -> str:
    """Where the snapshot of a scan of ``test_name`` alone is kept, beside the full scan's ``lookup``."""
    return cache_key("single test", f"{lookup}\0{test_name}".encode())
