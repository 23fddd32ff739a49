"""Per-file cache of parse results, keyed by a hash of the tool version, the path and the content.

One pickle per file under the cache directory. A missing, damaged or stale entry (other version,
other key) is ignored and rebuilt; writes go through :func:`atomic_write_bytes`, so a concurrent
or interrupted run never leaves a half-written entry behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from pathlib import Path

from model_debugging.reporting.atomic import atomic_write_bytes
from model_debugging.skips.records import ParsedFile

# Bump when the records or the parser change meaning: old entries then stop matching.
CACHE_FORMAT = "skips-4"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/model-debugging/scan``, else ``~/.cache/model-debugging/scan``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "model-debugging" / "scan"


def cache_key(path: str, data: bytes) -> str:
    digest = hashlib.sha256()
    digest.update(f"{CACHE_FORMAT}\0{path}\0".encode())
    digest.update(data)
    return digest.hexdigest()


class ParseCache:
    """``get(key)`` returns the stored :class:`ParsedFile` or None; ``put(key, parsed)`` stores it."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> ParsedFile | None:
        try:
            with open(self._entry(key), "rb") as handle:
                stored_key, parsed = pickle.load(handle)
        except FileNotFoundError:
            return None
        except Exception:  # a damaged entry of any kind is only a cache miss
            return None
        if stored_key != key or not isinstance(parsed, ParsedFile):
            return None
        return parsed

    def put(self, key: str, parsed: ParsedFile) -> None:
        with contextlib.suppress(OSError):  # an unwritable cache only costs speed next time
            atomic_write_bytes(
                self._entry(key), pickle.dumps((key, parsed), protocol=pickle.HIGHEST_PROTOCOL)
            )
