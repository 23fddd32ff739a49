"""The library's auto mappings (``MODEL_MAPPING_NAMES``, ...) by name, each read recorded.

Reading a mapping records its name and the mapping itself (whole: a rescan evaluates the reader
again when an entry of that mapping changes, not on another edit of the file defining it); asking
whether a mapping exists records its name only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

Entries = tuple[tuple[str, tuple[str, ...]], ...]  # (key, class names) of one mapping, in order


class TrackedMappings(Mapping[str, Entries]):
    """``entries`` by mapping name; ``read(names=..., mappings=...)`` records each read (``Library._read``)."""

    def __init__(self, read: Callable[..., None], entries: dict[str, Entries]):
        self._read, self._entries = read, entries

    def __getitem__(self, name: str) -> Entries:
        self._read(names=(name,), mappings=(name,))
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        """Whether a mapping of that name exists: a read of the name, not of the mapping."""
        if not isinstance(name, str):
            return False
        self._read(names=(name,))
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self._read(names=self._entries, mappings=self._entries)
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
