"""The scanner's settings: which files hold the common tests, where the model tests live.

The built-in :data:`DEFAULT_SETTINGS` are read from ``defaults/scan_skipped_tests.yaml``, package
data of this package; the repository's ``configs/scan_skipped_tests.yaml`` is an editable copy of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from model_debugging.config import ConfigError, Field, load_yaml, validate_mapping


@dataclass(frozen=True)
class CommonTestFile:
    path: str  # relative to the checkout
    origin: str  # the value of "origin" for tests defined there


@dataclass(frozen=True)
class ScanSettings:
    common_test_files: tuple[CommonTestFile, ...]
    models_dir: str
    test_file_pattern: str


BUILT_IN_CONFIG = Path(__file__).with_name("defaults") / "scan_skipped_tests.yaml"

_FIELDS = {
    "common_test_files": Field(list, required=True, item_types=dict),
    "models_dir": Field(str, required=True),
    "test_file_pattern": Field(str, required=True),
}
_FILE_FIELDS = {"path": Field(str, required=True), "origin": Field(str, required=True)}


def load_settings(path: str | os.PathLike) -> ScanSettings:
    """Read and validate a settings file; a :class:`ConfigError` names the file and the key."""
    data = validate_mapping(load_yaml(path), _FIELDS, path=path)
    files = []
    for index, item in enumerate(data["common_test_files"]):
        entry = validate_mapping(item, _FILE_FIELDS, path=path, prefix=f"common_test_files[{index}].")
        files.append(CommonTestFile(entry["path"], entry["origin"]))
    if not files:
        raise ConfigError(path, "must list at least one file", key="common_test_files")
    return ScanSettings(tuple(files), data["models_dir"], data["test_file_pattern"])


DEFAULT_SETTINGS = load_settings(BUILT_IN_CONFIG)
