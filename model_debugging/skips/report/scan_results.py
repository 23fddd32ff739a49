"""Load an analyzer result (``all_tests_scan_result.json``) as a pandas DataFrame.

One row per common test, indexed by test name (the same frame as upstream's
``pd.read_json(path).T``), with the upstream columns, any extra keys the analyzer wrote, and:

- ``ran_count`` / ``skipped_count``: the lengths of ``models_ran`` / ``models_skipped``;
- ``skip_reasons``: ``{model: reason}`` parsed from ``reasons_skipped`` (``"<model>: <reason>"``).

A result made with test runs or inert findings (``scan --observed`` / ``--inert``) gives each test a
``combined`` entry: every model by combined status. The frame then holds the combined status in the
upstream columns, with ``models_inert`` beside them (an inert pair is listed apart from ran and
counts as run in ``skipped_proportion``), and ``frame.attrs["combined"]`` (a :class:`CombinedNote`)
says so; without one, ``frame.attrs["combined"]`` is None.

``frame.attrs["provenance"]``: what made the result (a
:class:`~model_debugging.skips.results.provenance.Provenance`), None for a result written before
results recorded it (or by upstream's scanner); the ``provenance`` column is dropped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from model_debugging.command_line import shorten
from model_debugging.skips.results.output_files import RESULT_FILE
from model_debugging.skips.results.provenance import (
    PROVENANCE_KEY,
    Provenance,
    provenance_from_json,
    provenance_problem,
)

UPSTREAM_COLUMNS = ("origin", "models_ran", "models_skipped", "skipped_proportion", "reasons_skipped")
_LIST_COLUMNS = ("models_ran", "models_skipped", "reasons_skipped")
# the lists of a test's ``combined`` entry (every model once, by combined status)
COMBINED_LISTS = ("models_ran", "models_inert", "models_skipped", "models_undecided", "models_not_applicable")
_COMBINED_COUNTED = ("decided_by_observation", "disagreements")


@dataclass(frozen=True)
class CombinedNote:
    """Where a result's statuses come from when they are combined: how many tests have a
    ``combined`` entry, the pairs test runs decided (undecided statically), the disagreements
    between a run and the analyzer, and the inert pairs."""

    tests: int
    decided_by_runs: int
    disagreements: int
    inert: int


class ScanResultsError(ValueError):
    """A scan result file is unreadable, not JSON, or does not follow the analyzer's schema."""


def parse_reason(entry: str) -> tuple[str, str]:
    """Split ``"<model>: <reason>"`` into ``(model, reason)``; the reason may be empty."""
    model, _, reason = entry.partition(":")
    return model.strip(), reason.strip()


def read_scan_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ScanResultsError(f"{path}: cannot read scan result: {error.strerror or error}") from None
    except UnicodeDecodeError as error:  # a binary file, or a result saved in another encoding
        raise ScanResultsError(
            f"{path}: not a scan result: byte {error.start} is not UTF-8 ({error.object[error.start]:#04x})"
        ) from None
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


def _check_string_list(path: str | os.PathLike, test: str, key: str, value: object) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ScanResultsError(
            f"{path}: test '{test}': key '{key}' must list strings, got {shorten(repr(value))}"
        )


def _check_combined(path: str | os.PathLike, test: str, combined: object) -> None:
    if not isinstance(combined, dict):
        raise ScanResultsError(
            f"{path}: test '{test}': key 'combined' must be an object, got {type(combined).__name__}"
        )
    for key in (*COMBINED_LISTS, *_COMBINED_COUNTED):
        if key not in combined:
            raise ScanResultsError(f"{path}: test '{test}': missing key 'combined.{key}'")
        _check_string_list(path, test, f"combined.{key}", combined[key])
    reasons = combined.get("reasons_observed", {})
    if not isinstance(reasons, dict) or not all(isinstance(text, str) for text in reasons.values()):
        raise ScanResultsError(
            f"{path}: test '{test}': key 'combined.reasons_observed' must map models to reasons, "
            f"got {shorten(repr(reasons))}"
        )


def _with_combined_status(entry: Mapping[str, Any]) -> dict[str, Any]:
    """One test's entry with its upstream keys holding the combined status."""
    combined = entry["combined"]
    skipped = set(combined["models_skipped"])
    decided = len(combined["models_ran"]) + len(combined["models_inert"]) + len(skipped)  # inert runs
    details = (
        {"skips": [skip for skip in entry["skips"] if skip.get("model") in skipped]}
        if "skips" in entry
        else {}
    )
    return {
        **entry,
        **details,
        **{key: list(combined[key]) for key in COMBINED_LISTS},
        "skipped_proportion": round(len(skipped) / decided, 4) if decided else 0.0,
        "reasons_skipped": sorted(
            [line for line in entry["reasons_skipped"] if parse_reason(line)[0] in skipped]
            + [f"{model}: {reason}" for model, reason in combined.get("reasons_observed", {}).items()]
        ),
    }


def _provenance(source: str | os.PathLike, data: dict) -> Provenance | None:
    """The one provenance all entries share, or None when none has one (an older result)."""
    first: tuple[str, object] | None = None
    for test, entry in data.items():
        value = entry.get(PROVENANCE_KEY)
        if value is not None and (problem := provenance_problem(value)) is not None:
            raise ScanResultsError(f"{source}: test '{test}': key '{PROVENANCE_KEY}' {problem}")
        if first is None:
            first = (test, value)
        elif value != first[1]:
            raise ScanResultsError(
                f"{source}: tests '{first[0]}' and '{test}' differ in key '{PROVENANCE_KEY}': the file "
                "joins the results of different scans"
            )
    return provenance_from_json(first[1]) if first is not None and first[1] is not None else None


def load_provenance(path: str | os.PathLike) -> Provenance | None:
    """What made the result at ``path`` (None when it does not say); errors name the file, test and key."""
    data = read_scan_json(Path(path))
    if not isinstance(data, dict) or not all(isinstance(entry, dict) for entry in data.values()):
        raise ScanResultsError(f"{path}: expected an object keyed by test name, each entry an object")
    return _provenance(path, data)


def load_scan_results(path: str | os.PathLike) -> pd.DataFrame:
    """Read an analyzer result; errors name the file (and line, or test and key)."""
    path = Path(path)
    return scan_results_frame(read_scan_json(path), path)


def scan_results_frame(data: object, source: str | os.PathLike = "<scan result>") -> pd.DataFrame:
    """The frame of an analyzer result mapping (as ``json.load`` gives it); errors name ``source``."""
    if not isinstance(data, dict):
        raise ScanResultsError(f"{source}: expected an object keyed by test name, got {type(data).__name__}")
    if isinstance(data.get("origin"), str) and "models_ran" in data:  # the keys of one test's entry
        raise ScanResultsError(
            f"{source}: the result of a single test (scan --test_method_name); "
            f"give the {RESULT_FILE} of a full scan"
        )
    for test, entry in data.items():
        _check_entry(source, test, entry)
        if "combined" in entry:
            _check_combined(source, test, entry["combined"])
    provenance = _provenance(source, data)
    combined = {test: entry for test, entry in data.items() if "combined" in entry}
    note = None
    if combined:
        note = CombinedNote(
            tests=len(combined),
            decided_by_runs=sum(
                len(entry["combined"]["decided_by_observation"]) for entry in combined.values()
            ),
            disagreements=sum(len(entry["combined"]["disagreements"]) for entry in combined.values()),
            inert=sum(len(entry["combined"]["models_inert"]) for entry in combined.values()),
        )
        data = {
            test: _with_combined_status(entry) if test in combined else entry for test, entry in data.items()
        }
    frame = pd.DataFrame.from_dict(data, orient="index")
    if frame.empty:
        frame = pd.DataFrame(columns=list(UPSTREAM_COLUMNS))
    frame.index.name = "test"
    frame = frame.drop(columns=PROVENANCE_KEY, errors="ignore")  # the same in each row: kept in attrs
    frame["skipped_proportion"] = frame["skipped_proportion"].astype(float)
    frame["ran_count"] = frame["models_ran"].map(len).astype(int)
    frame["skipped_count"] = frame["models_skipped"].map(len).astype(int)
    frame["skip_reasons"] = frame["reasons_skipped"].map(lambda entries: dict(map(parse_reason, entries)))
    frame.attrs["combined"] = note
    frame.attrs["provenance"] = provenance
    return frame
