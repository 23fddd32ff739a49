"""Safetensors file names that stay inside ``debug_path`` and never collide.

Names follow upstream (module path + ``_inputs``/``_outputs`` + ``_{index}``/``_{key}``) and are
kept unchanged whenever they are already safe. A name is made safe for Linux, macOS and Windows
by replacing path separators, control and reserved characters, prefixing Windows device names
and shortening it below the file-name length limit. A name already handed out in the same
context (a module called again, a later top-level forward, or two names that only differ in
letter case or unsafe characters) gets ``__2``, ``__3``, ... appended.
"""

from __future__ import annotations

import hashlib
import re

SAFETENSORS_SUFFIX = ".safetensors"
# <>:"/\|?* are reserved on Windows; / and NUL on POSIX; control characters nowhere welcome.
_UNSAFE_CHARACTERS = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_WINDOWS_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(1, 10)} | {f"LPT{i}" for i in range(1, 10)}
)
# 255 bytes is the common file-name limit; keep room for ".safetensors" and a "__N" suffix.
_MAX_STEM_BYTES = 200
_HASH_CHARACTERS = 16


def safe_file_stem(stem: str) -> str:
    """Return ``stem`` unchanged if it is a safe file name on every platform, else a safe variant."""
    safe = _UNSAFE_CHARACTERS.sub("_", stem)
    if safe.startswith(".") or not safe:
        safe = "_" + safe
    if safe.split(".", 1)[0].rstrip(" ").upper() in _WINDOWS_DEVICE_NAMES:
        safe = "_" + safe
    encoded = safe.encode("utf-8")
    if len(encoded) > _MAX_STEM_BYTES:
        digest = hashlib.sha256(stem.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARACTERS]
        head = encoded[: _MAX_STEM_BYTES - _HASH_CHARACTERS - 1].decode("utf-8", "ignore")
        safe = f"{head}-{digest}"
    return safe


class FileNameRegistry:
    """Hands out unique ``.safetensors`` file names for one debugger context."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, stem: str) -> str:
        """Return a file name (no directory) for ``stem`` that no earlier call returned."""
        base = safe_file_stem(stem)
        candidate, count = base, 1
        # casefold: macOS and Windows file systems are case-insensitive by default
        while candidate.casefold() in self._taken:
            count += 1
            candidate = f"{base}__{count}"
        self._taken.add(candidate.casefold())
        return candidate + SAFETENSORS_SUFFIX
