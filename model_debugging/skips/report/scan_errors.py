"""Read the errors file a scan writes beside its result: the files pytest cannot collect.

A week in which a shared test file broke shows as removed tests and skips gone in the result
alone; the errors file says why, so the trend reads it when it is there.
"""

from __future__ import annotations

from pathlib import Path

from model_debugging.command_line import shorten
from model_debugging.skips.records.test_files import ParseError
from model_debugging.skips.report.scan_results import ScanResultsError, read_scan_json
from model_debugging.skips.results.output_files import errors_file_of

_KEYS = {"path": (str, "a string"), "line": (int, "an integer"), "message": (str, "a string")}


def _error(source: Path, index: int, entry: object) -> ParseError:
    where = f"{source}: entry {index}"
    if not isinstance(entry, dict):
        raise ScanResultsError(f"{where}: expected an object, got {type(entry).__name__}")
    for key, (kind, described) in _KEYS.items():
        value = entry.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ScanResultsError(f"{where}: key '{key}' must be {described}, got {shorten(repr(value))}")
    cause = entry.get("cause")
    return ParseError(
        entry["path"],
        entry["line"],
        entry["message"],
        None if cause is None else _error(source, index, cause),
    )


def load_scan_errors(result_file: str | Path) -> tuple[ParseError, ...] | None:
    """The errors written beside the scan result ``result_file``; None when there is no such file
    (a result copied without it)."""
    source = errors_file_of(Path(result_file))
    if not source.exists():
        return None
    data = read_scan_json(source)
    if not isinstance(data, list):
        raise ScanResultsError(f"{source}: expected a list of errors, got {type(data).__name__}")
    return tuple(_error(source, index, entry) for index, entry in enumerate(data))
