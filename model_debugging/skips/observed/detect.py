"""Find and read the reports a user points at, whatever their kind.

A path is a junit XML file, a ``--make-reports`` folder (one holding ``summary_short.txt``) or
that file itself, a collated reports JSON, our plugin's JSON record, or a folder holding any of
them (read recursively: a CI run's downloaded artifacts). Anything else named there is an error
that names the file: a report read wrongly would join wrong outcomes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from model_debugging.skips.observed.json_reports import (
    is_collated,
    is_plugin_record,
    load_json,
    read_collated,
    read_plugin_record,
)
from model_debugging.skips.observed.junit import ROOTS, parse_xml, read_junit
from model_debugging.skips.observed.records import Report, ReportError
from model_debugging.skips.observed.short_summary import read_summary

SUMMARY_FILE = "summary_short.txt"
_KNOWN = "junit XML, a --make-reports folder or its summary_short.txt, collated_reports JSON, or a pytest --observed_json record"


def read_reports(paths: Iterable[str | os.PathLike]) -> list[Report]:
    """Every report under ``paths``, in order (a folder's in name order).

    Raises:
        ReportError: a path that does not exist, or a file that is not a report or is malformed.
    """
    reports = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            reports.extend(_read_folder(path))
        elif path.is_file():
            reports.append(_read_file(path))
        else:
            raise ReportError(f"{path}: no such file or folder")
    return reports


def _read_folder(folder: Path) -> list[Report]:
    reports = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        here = Path(root)
        if SUMMARY_FILE in files:
            reports.append(_read_make_reports(here))
        reports.extend(_read_file(here / name) for name in sorted(files) if name.endswith((".xml", ".json")))
    return reports


def _read_file(path: Path) -> Report:
    if path.name == SUMMARY_FILE:
        return _read_make_reports(path.parent)
    if path.suffix == ".xml":
        root = parse_xml(path)
        if root.tag not in ROOTS:
            raise ReportError(f"{path}: not a junit XML report (its root element is <{root.tag}>)")
        return Report(str(path), "junit", str(path), tuple(read_junit(path, root)))
    if path.suffix == ".json":
        document = load_json(path)
        if is_plugin_record(document):
            return read_plugin_record(path, document)
        if is_collated(document):
            return read_collated(path, document)
        raise ReportError(f"{path}: not a report this reads ({_KNOWN})")
    raise ReportError(f"{path}: not a report this reads ({_KNOWN})")


def ci_folder_model(folder: Path) -> str | None:
    """The model of a CI ``--make-reports`` folder (``single-gpu_run_models_gpu_models_bert_test_reports``),
    named as ``utils/collated_reports.py`` names it; None for another name."""
    name = folder.name
    if "models_" not in name or not name.endswith("_test_reports"):
        return None
    return name.split("models_")[-1].removesuffix("_test_reports") or None


def _read_make_reports(folder: Path) -> Report:
    items, warnings = read_summary(folder / SUMMARY_FILE, ci_folder_model(folder))
    return Report(str(folder), "make-reports", folder.name, tuple(items), warnings=tuple(warnings))
