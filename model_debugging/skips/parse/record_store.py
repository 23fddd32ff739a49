"""Where a scan keeps the records of the files it parsed: only the shared ones stay in memory.

A model's test classes can inherit from classes of other files (the common testers, another
model's test file), so resolution needs those records for the whole scan; every other record is
needed once, while its model is analyzed. The store keeps in memory the records it is told to pin
(and the small records of files that could not be parsed), and loads the others on demand from
the parse cache they were written to (a scratch cache when the scan runs without one), parsing a
file again in the rare case its entry is gone. Its memory then grows with the shared files, not
with the number of files.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from model_debugging.skips.parse.batch import iter_parsed
from model_debugging.skips.parse.other_tests import named_tests
from model_debugging.skips.records.test_file_index import TestFileIndex
from model_debugging.skips.records.test_files import RELATIVE_IMPORT, NamedTests, ParsedFile, ParseError
from model_debugging.skips.source.files import read_source
from model_debugging.skips.source.modules import imported_modules, module_name
from model_debugging.skips.source.pytest_settings import DEFAULT_PYTEST, PytestSettings
from model_debugging.skips.source.scanned_paths import package_depths
from model_debugging.skips.work.entries import ParseCache


class RecordStore:
    """The records of one scan, by path; :meth:`view` gives a resolver its module -> record mapping."""

    def __init__(
        self,
        repo: Path,
        cache: ParseCache,
        *,
        elide: Collection[str] = (),
        test: str | None = None,
        jobs: int | None = None,
        pytest: PytestSettings = DEFAULT_PYTEST,
    ):
        """``elide``: the files parsed without the code the scanner never reads; ``test``: a scan of
        that test alone, which parses every file without the tests its verdicts never read; ``pytest``: the checkout's
        pytest settings (what it collects, how it names modules)."""
        self._repo, self._cache, self._elide, self._jobs = repo, cache, set(elide), jobs
        self._test = test
        self._every_test: set[str] = set()  # files parsed again with every test's body
        self._left_out: dict[str, tuple[str, ...]] = {}  # path -> tests its record left out
        self._named: dict[str, NamedTests | None] = {}  # path -> tests its parsed text names
        self.pytest = pytest
        self._keys: dict[str, str | None] = {}  # path -> cache key of its record
        self._paths: dict[str, str] = {}  # module name -> path
        self._pinned: dict[str, ParsedFile] = {}
        self._errors: dict[str, ParseError] = {}
        self._depths: dict[str, int] = {}  # path -> how many folders above it are packages

    def __contains__(self, path: str) -> bool:
        return path in self._keys

    def paths(self) -> list[str]:
        """The paths of the files the store holds, in the order it took them."""
        return list(self._keys)

    def parse(self, paths: Iterable[str], imports_under: tuple[str, ...], **options) -> set[str]:
        """Parse ``paths`` (``options`` go to :func:`iter_parsed`).

        Returns the modules they import from whose top-level package is in ``imports_under``.
        """
        imported: set[str] = set()
        options.update(cache=self._cache, jobs=self._jobs, elide=self._elide, test=self._test)
        for path, parsed, key in iter_parsed(self._repo, paths, **options):
            self._add(path, parsed, key)
            imported.update(name for name in imported_modules(parsed) if name.split(".")[0] in imports_under)
        return imported

    def parse_in_full(self, paths: Iterable[str]) -> None:
        """Parse ``paths`` again without eliding anything; their new records stay in memory."""
        paths = sorted(paths)
        self._elide.difference_update(paths)
        for path, parsed, key in iter_parsed(self._repo, paths, cache=self._cache, jobs=self._jobs):
            self._add(path, parsed, key)
            self._pinned[path] = parsed

    def parse_named_tests_again(self) -> None:
        """Parse again, with the bodies of all their tests, the files whose record left out a test
        that the parsed text of a file of the store names (``parse/other_tests.py``), until none does."""
        while self._left_out:
            names: set[str] = set()
            prefixes: set[str] = set()
            for path in self._keys:
                named = self._named_in(path)
                names |= named.names
                prefixes |= set(named.prefixes)
            named = NamedTests(frozenset(names), tuple(prefixes))
            paths = sorted(path for path, tests in self._left_out.items() if any(map(named.name, tests)))
            if not paths:
                return
            self._every_test.update(paths)
            for path, parsed, key in iter_parsed(
                self._repo, paths, cache=self._cache, jobs=self._jobs, elide=self._elide
            ):
                self._add(path, parsed, key)

    def _named_in(self, path: str) -> NamedTests:
        """The tests the parsed text of ``path`` names: its whole text for a record made for every test."""
        named = self._named.get(path)
        if named is None:
            try:
                text = read_source(self._repo / path).decode("utf-8", "replace")
            except OSError:
                text = ""
            named = self._named[path] = named_tests(text)
        return named

    def _test_of(self, path: str) -> str | None:
        return None if path in self._every_test else self._test

    def _add(self, path: str, parsed: ParsedFile, key: str | None) -> None:
        self._keys[path] = key
        self._left_out.pop(path, None)
        if parsed.tests_left_out:
            self._left_out[path] = parsed.tests_left_out
        self._named[path] = parsed.tests_named
        self._paths[module_name(path)] = path
        self._errors.pop(path, None)
        parsed = self._in_its_package(path, parsed)
        if parsed.error is not None:  # small, and the cache does not keep them
            self._errors[path] = parsed.error
            self._pinned[path] = parsed
        elif path in self._pinned:  # parsed again: the new record replaces the kept one
            self._pinned[path] = parsed
        if parsed.import_error is not None:
            self._errors[path] = parsed.import_error

    def _in_its_package(self, path: str, parsed: ParsedFile) -> ParsedFile:
        """The record with the error its relative imports meet when they go above its package
        (a folder without ``__init__.py`` on the way): Python raises at the import, pytest collects
        nothing from the file. Its folders are the store's to know, not the content-keyed record's."""
        deepest = max((item.level for item in parsed.imports), default=0)
        if deepest == 0 or parsed.error is not None or not self.pytest.relative_imports_need_packages:
            return parsed
        if path not in self._depths:
            self._depths[path] = package_depths(self._repo, [path])[path]
        depth = self._depths[path]
        if deepest <= depth:
            return parsed
        why = "with no known parent package" if depth == 0 else "beyond top-level package"
        pattern = re.compile(rb"^[ \t]*from[ \t]+\.{%d,}" % (depth + 1), re.MULTILINE)
        try:
            match = pattern.search(read_source(self._repo / path))
        except OSError:
            match = None
        line = 1 if match is None else match.string.count(b"\n", 0, match.start()) + 1
        error = ParseError(path, line, f"{RELATIVE_IMPORT} {why}")
        return replace(parsed, import_error=error, import_skip=None)

    def pin(self, paths: Iterable[str]) -> None:
        """Keep the records of ``paths`` (those the store holds) in memory from now on."""
        for path in paths:
            if path in self._keys and path not in self._pinned:
                self._pinned[path] = self.get(path)

    def path_of_module(self, module: str) -> str | None:
        return self._paths.get(module)

    def module_names(self) -> Iterator[str]:
        return iter(self._paths)

    def get(self, path: str) -> ParsedFile:
        """The record of ``path`` (which the store holds): from memory, the cache, or parsed again."""
        parsed = self._pinned.get(path)
        if parsed is not None:
            return parsed
        key = self._keys[path]
        parsed = self._cache.get(key) if key is not None else None
        if parsed is None:  # the entry went away (damaged, unwritable cache): parse it again
            (_, parsed, key), *_ = iter_parsed(
                self._repo, [path], cache=self._cache, jobs=1, elide=self._elide, test=self._test_of(path)
            )
            self._keys[path] = key
        return self._in_its_package(path, parsed)

    def keep_errors(self, errors: Iterable[ParseError]) -> None:
        """Add the parse errors met elsewhere (a forked evaluation parsing files in full)."""
        for error in errors:
            self._errors[error.path] = error

    def errors(self) -> tuple[ParseError, ...]:
        """The parse errors of every file, sorted by path."""
        return tuple(self._errors[path] for path in sorted(self._errors))

    def view(self, asked: set[str] | None = None) -> Mapping[str, ParsedFile]:
        """Module name -> record, loading records once per view: give each model a view of its own.
        Every module name looked up in the view (found or not) is added to ``asked``."""
        return _View(self, set() if asked is None else asked)

    def file_index(self, keys: Mapping[str, str]) -> TestFileIndex:
        """The files the store holds, by module, with their content keys (from ``keys``) and depths."""
        depths = package_depths(self._repo, self._keys)
        files = {path: (keys.get(path, ""), depth) for path, depth in depths.items()}
        return TestFileIndex(dict(self._paths), files)


class _View(Mapping[str, ParsedFile]):
    def __init__(self, store: RecordStore, asked: set[str]):
        self._store, self._asked = store, asked
        self._loaded: dict[str, ParsedFile] = {}

    def __getitem__(self, module: str) -> ParsedFile:
        self._asked.add(module)
        parsed = self._loaded.get(module)
        if parsed is None:
            path = self._store.path_of_module(module)
            if path is None:
                raise KeyError(module)
            parsed = self._loaded[module] = self._store.get(path)
        return parsed

    def __contains__(self, module: object) -> bool:
        if not isinstance(module, str):
            return False
        self._asked.add(module)
        return self._store.path_of_module(module) is not None

    def __iter__(self) -> Iterator[str]:
        return self._store.module_names()

    def __len__(self) -> int:
        return sum(1 for _ in self._store.module_names())
