"""Load an analyzer result (``all_tests_scan_result.json``) as a pandas DataFrame.

One row per common test, indexed by test name (the same frame as upstream's
``pd.read_json(path).T``), with the upstream columns, any extra keys the analyzer wrote, and:

- ``ran_count`` / ``skipped_count``: the lengths of ``models_ran`` / ``models_skipped``;
- ``skip_reasons``: ``{model: reason}`` parsed from ``reasons_skipped`` (``"<model>: <reason>"``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from model_debugging.command_line import shorten

UPSTREAM_COLUMNS = ("origin", "models_ran", "models_skipped", "skipped_proportion", "reasons_skipped")
_LIST_COLUMNS = ("models_ran", "models_skipped", "reasons_skipped")


class ScanResultsError(ValueError):
    """A scan result file is unreadable, not JSON, or does not follow the analyzer's schema."""


def parse_reason(entry: str) -> tuple[str, str]:
    """Split ``"<model>: <reason>"`` into ``(model, reason)``; the reason may be empty."""
    model, _, reason = entry.partition(":")
    return model.strip(), reason.strip()


def _read_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ScanResultsError(f"{path}: cannot read scan result: {error.strerror or error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ScanResultsError(f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None


def _check_entry(path: str | os.PathLike, test: str, entry: object) -> None:
    if not isinstance(entry, dict):
        raise ScanResultsError(f"{path}: test '{test}': expected an object, got {type(entry).__name__}")
    for key in UPSTREAM_COLUMNS:
        if key not in entry:
            raise ScanResultsError(f"{path}: test '{test}': missing key '{key}'")
    for key in _LIST_COLUMNS:
        if not isinstance(entry[key], list):
            raise ScanResultsError(
                f"{path}: test '{test}': key '{key}' must be a list, got {shorten(repr(entry[key]))}"
            )
        for item in entry[key]:
            if not isinstance(item, str):
                raise ScanResultsError(
                    f"{path}: test '{test}': key '{key}' must list strings, got {shorten(repr(item))}"
                )
    proportion = entry["skipped_proportion"]
    if isinstance(proportion, bool) or not isinstance(proportion, int | float):
        raise ScanResultsError(
            f"{path}: test '{test}': key 'skipped_proportion' must be a number, got {proportion!r}"
        )


def load_scan_results(path: str | os.PathLike) -> pd.DataFrame:
    """Read an analyzer result; errors name the file (and line, or test and key)."""
    path = Path(path)
    return scan_results_frame(_read_json(path), path)


def scan_results_frame(data: object, source: str | os.PathLike = "<scan result>") -> pd.DataFrame:
    """The frame of an analyzer result mapping (as ``json.load`` gives it); errors name ``source``."""
    if not isinstance(data, dict):
        raise ScanResultsError(f"{source}: expected an object keyed by test name, got {type(data).__name__}")
    for test, entry in data.items():
        _check_entry(source, test, entry)
    frame = pd.DataFrame.from_dict(data, orient="index")
    if frame.empty:
        frame = pd.DataFrame(columns=list(UPSTREAM_COLUMNS))
    frame.index.name = "test"
    frame["skipped_proportion"] = frame["skipped_proportion"].astype(float)
    frame["ran_count"] = frame["models_ran"].map(len).astype(int)
    frame["skipped_count"] = frame["models_skipped"].map(len).astype(int)
    frame["skip_reasons"] = frame["reasons_skipped"].map(lambda entries: dict(map(parse_reason, entries)))
    return frame
