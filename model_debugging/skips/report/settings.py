"""Thresholds and row counts of the trend report and the PR check (``skip_report.yaml``).

Every key is optional; a missing section or key takes the default below. Without a file, the
built-in ``skips/defaults/skip_report.yaml`` (package data; ``model-debugging report --print_default_config``
prints it) is read. Values are validated and errors name the file and the dotted key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from model_debugging.config import ConfigError, Field, load_yaml, validate_mapping

BUILT_IN_CONFIG = Path(__file__).parents[1] / "defaults" / "skip_report.yaml"

_REPORT_FIELDS = {
    "min_proportion_change": Field((int, float), default=0.0),
    "headline_rows": Field(int, default=20),
    "changed_rows": Field(int, default=30),
    "model_change_rows": Field(int, default=50),
    "test_change_rows": Field(int, default=30),
}
_PR_CHECK_FIELDS = {
    "min_skipped_share": Field((int, float), default=0.1),
    "flag_library_skips": Field(bool, default=True),
    "max_newly_skipped_share": Field((int, float), default=0.1),
    "max_rows": Field(int, default=100),
}
# shares are fractions of models; switches are true or false; every other value is a row count
_SHARE_KEYS = {"min_proportion_change", "min_skipped_share", "max_newly_skipped_share"}
_SWITCH_KEYS = {"flag_library_skips"}
_SECTIONS = {"report": Field(dict, default=None), "pr_check": Field(dict, default=None)}


@dataclass(frozen=True)
class ReportSettings:
    """How the trend report filters and how many rows each of its tables shows."""

    min_proportion_change: float = 0.0
    headline_rows: int = 20
    changed_rows: int = 30
    model_change_rows: int = 50
    test_change_rows: int = 30


@dataclass(frozen=True)
class PRCheckSettings:
    """``min_skipped_share``: a new skip the test files explain fails the check when fewer than this
    share of models skipped the test before; ``flag_library_skips``: a new skip only a library change
    explains fails it (whatever the share); ``max_newly_skipped_share``: the new skips of a test fail it
    when more than this share of the models skip it after the change and did not before (one skip in
    a shared file reaching many models, whatever the share before)."""

    min_skipped_share: float = 0.1
    flag_library_skips: bool = True
    max_newly_skipped_share: float = 0.1
    max_rows: int = 100


def _section(data: dict, name: str, fields: dict[str, Field], path) -> dict:
    values = validate_mapping(data.get(name), fields, path=path, prefix=f"{name}.")
    for key, value in values.items():
        if key in _SHARE_KEYS and not 0 <= value <= 1:
            raise ConfigError(path, f"must be a share between 0 and 1, got {value!r}", key=f"{name}.{key}")
        if key not in _SHARE_KEYS | _SWITCH_KEYS and value < 0:
            raise ConfigError(path, f"must be a row count >= 0, got {value!r}", key=f"{name}.{key}")
    return values


def load_settings(path: str | os.PathLike | None = None) -> tuple[ReportSettings, PRCheckSettings]:
    """Read the config at ``path``; without one, the built-in defaults."""
    path = BUILT_IN_CONFIG if path is None else path
    data = validate_mapping(load_yaml(path), _SECTIONS, path=path)
    report = _section(data, "report", _REPORT_FIELDS, path)
    pr_check = _section(data, "pr_check", _PR_CHECK_FIELDS, path)
    return ReportSettings(**report), PRCheckSettings(**pr_check)
