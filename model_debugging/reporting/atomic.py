"""Atomic file writes: a crash or kill mid-write leaves the previous file intact.

The data goes to a temporary file in the destination directory, is flushed and fsynced,
then renamed over the destination (``os.replace`` is atomic on POSIX and Windows).

The report writers (``atomic_write_bytes``/``_text``/``_json``) write where a user's path
leads: through a symlink to the file it names, into a FIFO or a character device such as
``/dev/stdout`` (which are never replaced by a regular file), and refuse directories, block
devices and sockets. ``atomic_write_with`` is for files a tool names itself inside its own
directory (trace and cache files): it replaces the name it is given, a symlink included.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import itertools
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_debugging.console import drop_output


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


def _same_file(status: os.stat_result, fd: int) -> bool:
    try:
        other = os.fstat(fd)
    except OSError:  # the stream is closed
        return False
    return (status.st_dev, status.st_ino) == (other.st_dev, other.st_ino)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_through(path: Path, status: os.stat_result, data: bytes) -> None:
    """Write ``data`` into the FIFO, character device or standard stream ``path`` is, without replacing it."""
    for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
        if _same_file(status, fd):  # e.g. /dev/stdout, or stdout redirected to this very file
            if stream is not None:
                stream.flush()  # what the command printed before comes first
            try:
                _write_all(fd, data)
            except BrokenPipeError:  # `command --json /dev/stdout | head`: the rest is not read
                drop_output(fd)
            return
    nonblocking = getattr(os, "O_NONBLOCK", 0)  # POSIX: a FIFO nobody reads is an error instead of a hang
    try:
        fd = os.open(path, os.O_WRONLY | nonblocking | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "no process is reading this FIFO", str(path)) from None
        raise
    try:
        if nonblocking:
            os.set_blocking(fd, True)
        _write_all(fd, data)
    finally:
        os.close(fd)


def _special_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _named(error: OSError, path: Path) -> OSError:
    """``error`` naming ``path``, the file the caller asked for, rather than a temporary file."""
    if error.errno is None:
        return error
    return OSError(error.errno, error.strerror or str(error), str(path))  # the subclass of the errno


def _write_atomically(path: str | os.PathLike, data: bytes) -> Path:
    """Publish ``data`` at ``path``: atomically for a regular file or a new one, through a FIFO or device.

    A symlink is followed: the file it names is replaced (the temporary file is made in that
    file's directory), never the link. A FIFO, a character device (``/dev/null``, a terminal)
    or a file that is this process's stdout or stderr is written into, not replaced; any other
    special file (a directory, a block device, a socket) is refused with an ``OSError``. An
    ``OSError`` names ``path``, never the temporary file.
    """
    try:
        return _write_to(Path(path), data)
    except OSError as error:
        raise _named(error, Path(path)) from error


def _write_to(given: Path, data: bytes) -> Path:
    try:
        status = os.stat(given)  # follows symlinks
    except FileNotFoundError:
        status = None
    if status is not None and not stat.S_ISREG(status.st_mode):
        if stat.S_ISFIFO(status.st_mode) or stat.S_ISCHR(status.st_mode):
            _write_through(given, status, data)
            return given
        raise OSError(errno.EINVAL, f"is {_special_kind(status.st_mode)}, not a file to write", str(given))
    if status is not None and (_same_file(status, 1) or _same_file(status, 2)):
        _write_through(given, status, data)
        return given
    target = Path(os.path.realpath(given))  # a symlink's target, where the rename must happen
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _publish(tmp_name, target)
        _remove_stale_temporaries(target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return given


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
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise _named(error, target) from error
        raise
    return target


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path (see :func:`_write_atomically`)."""
    return _write_atomically(path, data)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path; nothing is written if it cannot be encoded."""
    return _write_atomically(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, data: Any, *, indent: int | None = 2) -> Path:
    """Serialize ``data`` as JSON to ``path`` atomically; nothing is written if serialization fails."""
    return _write_atomically(path, json.dumps(data, indent=indent, ensure_ascii=False).encode("utf-8"))
