"""What a scan covers and answers, apart from the scan itself (``decide/scan.py``), so that a scan
answered from the cache imports none of the evaluator."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from model_debugging.command_line import shorten
from model_debugging.skips.records.test_file_index import TestFileIndex
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.source.pytest_settings import PytestSettings
from model_debugging.skips.source.settings import ScanSettings

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


def check_known(tests: Mapping[str, object], name: str, common_paths: Sequence[str]) -> None:
    """Raise :class:`UnknownTestError` (with the closest names, else the ``common_paths`` searched)
    when ``name`` is not in ``tests``."""
    if name not in tests:
        raise UnknownTestError(name, difflib.get_close_matches(name, tests, n=3), common_paths)
