"""Which test files a scan held, so that a later scan can tell which of a model's lookups changed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class TestFileIndex:
    """The test files of a scan: the module each is imported as, and each file's content key and
    package depth (how many folders above it hold an ``__init__.py``: relative imports depend on it)."""

    __test__ = False  # not a pytest test class

    modules: Mapping[str, str]  # module name -> path
    files: Mapping[str, tuple[str, int]]  # path -> (content key, "" when unreadable; package depth)

    def found(self, module: str) -> tuple[str, str, int] | None:
        """What looking ``module`` up finds: its file's path, content key and depth; None: no file."""
        path = self.modules.get(module)
        if path is None:
            return None
        return (path, *self.files.get(path, ("", 0)))

    def keys(self) -> tuple[tuple[str, str, int], ...]:
        """(path, content key, package depth) of the files, sorted by path."""
        return tuple(sorted((path, key, depth) for path, (key, depth) in self.files.items()))

    def differs(self, other: TestFileIndex, modules: Iterable[str]) -> bool:
        """Whether looking one of ``modules`` up finds another file, or a file changed, in ``other``."""
        return any(self.found(module) != other.found(module) for module in modules)
