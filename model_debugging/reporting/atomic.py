"""Atomic file writes: a crash or kill mid-write leaves the previous file intact.

The data goes to a temporary file in the destination directory, is flushed and fsynced,
then renamed over the destination (``os.replace`` is atomic on POSIX and Windows).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def _process_umask() -> int:
    # os.umask can only be read by setting it; do it once, at import, before any worker threads exist.
    mask = os.umask(0)
    os.umask(mask)
    return mask


_DEFAULT_MODE = 0o666 & ~_process_umask()
_write_counter = itertools.count()  # thread-safe in CPython: next() on a count holds the GIL


# A writer killed mid-write (kill -9, power loss) leaves its temporary file behind. One this old
# cannot belong to a write still in progress, so the next write of the same file removes it.
STALE_TEMPORARY_SECONDS = 3600


def _temporary_prefix(target: Path) -> str:
    # the name is cut so that prefix + mkstemp's 8 random characters + ".tmp" fit in 255 bytes
    return f".{target.name.encode('utf-8')[:200].decode('utf-8', 'ignore')}."


def _remove_stale_temporaries(target: Path) -> None:
    cutoff = time.time() - STALE_TEMPORARY_SECONDS
    for leftover in target.parent.glob(f"{glob.escape(_temporary_prefix(target))}*.tmp"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()


def _publish(tmp_name: str, target: Path) -> None:
    """Rename the finished temporary file over ``target``."""
    # mkstemp creates the file 0600; give it the mode an ordinary open() would, or keep the old one.
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = _DEFAULT_MODE
    os.chmod(tmp_name, mode)
    os.replace(tmp_name, target)


def _write_atomically(path: str | os.PathLike, mode: str, fill: Callable[[IO], None], **open_kwargs) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as handle:
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        _publish(tmp_name, target)
        _remove_stale_temporaries(target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return target


def atomic_write_with(
    path: str | os.PathLike, write_to: Callable[[Path], None], *, durable: bool = True
) -> Path:
    """Atomically publish a file that ``write_to(temporary_path)`` creates, for libraries that only take a path.

    ``durable=False`` skips the fsync: the file is still never seen half-written after a crash of
    the process, but may be lost to a power cut. Use it for many files written in a hot loop.
    """
    target = Path(path)
    # unique per process and call without mkstemp's cost; the writer creates the file itself
    temporary = target.parent / f"{_temporary_prefix(target)}{os.getpid()}-{next(_write_counter)}.tmp"
    try:
        write_to(temporary)
        if durable:
            fd = os.open(temporary, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))  # a replaced file keeps its mode
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return target


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path."""
    return _write_atomically(path, "wb", lambda handle: handle.write(data))


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    return _write_atomically(path, "w", lambda handle: handle.write(text), encoding="utf-8", newline="\n")


def atomic_write_json(path: str | os.PathLike, data: Any, *, indent: int | None = 2) -> Path:
    """Serialize ``data`` as JSON to ``path`` atomically; nothing is written if serialization fails."""
    return _write_atomically(
        path,
        "w",
        lambda handle: json.dump(data, handle, indent=indent, ensure_ascii=False),
        encoding="utf-8",
        newline="\n",
    )
