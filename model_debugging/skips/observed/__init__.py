"""Join what test runs did with what the analyzer reads, and find stale skips and inert tests.

Reports of runs (pytest's junit XML, transformers' ``--make-reports`` folders and collated CI
reports, the record of our pytest plugin :mod:`model_debugging.pytest_plugin`) are read
(:func:`read_reports`), each item named as the analyzer names pairs, and joined with a scan's
verdicts (:func:`with_observations`): every pair gets a combined status and where it comes from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from model_debugging.skips.observed.combined import ObservedJoin, join_observed
from model_debugging.skips.observed.detect import read_reports
from model_debugging.skips.observed.naming import Namer
from model_debugging.skips.observed.records import Report, ReportError
from model_debugging.skips.results.scan_result import ScanResult
from model_debugging.skips.source.settings import ScanSettings

__all__ = [
    "ObservedJoin",
    "Report",
    "ReportError",
    "read_reports",
    "with_observations",
]


def with_observations(
    result: ScanResult,
    reports: Sequence[Report],
    repo: Path,
    settings: ScanSettings,
    inert: Mapping[str, Sequence[str]] | None = None,
) -> ScanResult:
    """``result`` with ``combined``: its verdicts joined with what ``reports`` saw, and with the pairs
    found ``inert`` statically (test -> models, see :mod:`model_debugging.skips.inert`)."""
    models = {
        model
        for test in result.tests.values()
        for group in (test.models_ran, test.models_skipped, test.models_undecided, test.models_not_applicable)
        for model in group
    }
    namer = Namer(repo, settings, result.tests, models)
    join = join_observed(result.tests, reports, namer, repo, inert or {})
    return dataclasses.replace(result, combined=join)
