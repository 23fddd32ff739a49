"""Read test sources the way Python does: regular files only, a size cap, PEP 263 encodings.

``read_source`` never blocks on a FIFO and never reads more than :data:`MAX_FILE_BYTES` + 1 bytes
(a symlink to ``/dev/zero`` is refused, not read forever). ``decode_source`` takes the encoding from
a BOM or a ``# -*- coding: ... -*-`` line, as Python does, and reports a file only when Python
itself would refuse it, with Python's message; line endings are translated as an import does.
"""

from __future__ import annotations

import ast
import io
import os
import stat
import tokenize
from pathlib import Path

MAX_FILE_BYTES = 2_000_000


class UnreadableSource(OSError):
    """The path is no regular file, or cannot be opened or read; ``strerror`` says why."""


def read_source(path: Path) -> bytes:
    """The bytes of the regular file ``path``, at most ``MAX_FILE_BYTES + 1`` of them."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without waiting for a writer
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kind = (
                "FIFO"
                if stat.S_ISFIFO(mode)
                else "device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "special file"
            )
            raise UnreadableSource(0, f"not a regular file ({kind})")
        chunks, size = [], 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(descriptor, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def _python_refusal(data: bytes, path: str) -> tuple[int, str] | None:
    """Python's own line and message when it refuses to compile ``data``; None when it accepts it."""
    try:
        compile(data, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        return max(1, error.lineno or 1), error.msg
    except (ValueError, RecursionError, MemoryError) as error:
        return 1, f"{type(error).__name__}: {error}"
    return None


def decode_source(data: bytes, path: str) -> tuple[str | None, tuple[int, str] | None]:
    """``(text, None)``, or ``(None, (line, message))`` when Python would not read the file."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown encoding, a BOM contradicting the declaration
        return None, (max(1, error.lineno or 1), error.msg)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        # Python decodes tokens, not the file: a bad byte in a comment may be fine. Ask Python.
        refusal = _python_refusal(data, path)
        if refusal is not None:
            return None, refusal
        text = data.decode(encoding, errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n"), None


def python_files(repo: Path, folder: str) -> tuple[str, ...]:
    """The repository-relative paths of the ``.py`` files under ``folder`` (at any depth, hidden
    names left out), sorted; none when it is no folder."""
    root = repo / folder
    found = []
    for parent, folders, names in os.walk(root):
        folders[:] = [name for name in folders if not name.startswith(".")]
        inside = Path(parent).relative_to(root).as_posix()
        prefix = folder if inside == "." else f"{folder}/{inside}"
        found += [f"{prefix}/{name}" for name in names if name.endswith(".py") and not name.startswith(".")]
    return tuple(sorted(found))
