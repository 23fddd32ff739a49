"""What a scan covers and answers, apart from the scan itself (``decide/scan.py``), so that a scan
answered from the cache imports none of the evaluator."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from model_debugging.command_line import shorten
from model_debugging.skips.parse.record_store import RecordStore
from model_debugging.skips.records.test_file_index import TestFileIndex
from model_debugging.skips.records.test_files import ParsedFile
from model_debugging.skips.resolve.classes import ClassRef
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.source.modules import module_name
from model_debugging.skips.source.pytest_settings import PytestSettings
from model_debugging.skips.source.settings import ScanSettings
from model_debugging.skips.work.entries import ParseCache

if TYPE_CHECKING:
    from model_debugging.skips.decide.per_model import ModelVerdicts
    from model_debugging.skips.decide.runtime_checks import RuntimeChecks


class UnknownTestError(Exception):
    """``test_method_name`` is not a common test; ``suggestions`` holds the closest names."""

    def __init__(self, name: str, suggestions: list[str], common_paths: Sequence[str]):
        self.name, self.suggestions = name, suggestions
        if suggestions:
            hint = f"; did you mean {', '.join(suggestions)}?"
        else:  # a test of another file (tests/utils/...): say where common tests are looked for
            hint = f": no test of that name in {', '.join(common_paths)} (common_test_files of the settings)"
        super().__init__(f"unknown common test {shorten(repr(name))}{hint}")


@dataclass(frozen=True)
class ScanScope:
    """What one scan covers: the checkout, its settings (ours and pytest's), its model and common
    test files."""

    repo: Path
    settings: ScanSettings
    pytest: PytestSettings
    model_files: list[str]
    common_paths: list[str]
    jobs: int | None = None


@dataclass
class FullScan:
    """A scan's result, and what an incremental scan keeps of it: each model's outcomes with what
    their evaluation read (``models``, when asked for), the checks run (the library, what every model
    read), the test files the scan held (``test_files``) and the cache keys of the library's records
    (``record_keys``)."""

    result: ScanResult
    runtime: RuntimeChecks
    test_files: TestFileIndex
    evaluated: int = 0  # models evaluated
    models: list[ModelVerdicts] = field(default_factory=list)
    record_keys: dict[str, str] = field(default_factory=dict)


def check_test_name(scope: ScanScope, entries: ParseCache, name: str) -> None:
    """Raise :class:`UnknownTestError` (with the closest names, else the common files searched) when
    ``name`` is not a test of ``scope``'s common files, from those files alone: before a scan's slow
    work, which a mistyped name would only delay. The one check of the name: a scan of ``name``
    (``decide/scan.py``, the cache's answers) relies on it. The files are parsed as the scan of
    ``name`` parses them, so that the scan then finds them in ``entries`` (the parse cache) instead of
    parsing them again."""
    store = RecordStore(
        scope.repo, entries, elide=scope.model_files, test=name, jobs=scope.jobs, pytest=scope.pytest
    )
    store.parse(scope.common_paths, ())
    files = {path: store.get(path) for path in scope.common_paths if path in store}
    tests = common_tests(files, scope.settings)
    if name not in tests:
        raise UnknownTestError(name, difflib.get_close_matches(name, tests, n=3), scope.common_paths)


def common_tests(files: Mapping[str, ParsedFile], settings: ScanSettings) -> dict[str, tuple[str, frozenset]]:
    """test name -> (origin, classes of the common files that define it), in file order."""
    tests: dict[str, tuple[str, set[ClassRef]]] = {}
    for common in settings.common_test_files:
        parsed = files.get(common.path)
        if parsed is None or parsed.error is not None:
            continue
        for info in parsed.classes:
            for method in info.methods:
                if method.name.startswith("test_"):
                    _, refs = tests.setdefault(method.name, (common.origin, set()))
                    tests[method.name] = (
                        common.origin,
                        refs | {ClassRef(module_name(common.path), info.name)},
                    )
        for name in parsed.test_functions:
            tests.setdefault(name, (common.origin, set()))
    return {name: (origin, frozenset(refs)) for name, (origin, refs) in tests.items()}
