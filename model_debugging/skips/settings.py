"""The scanner's settings: which files hold the common tests, where the model tests live.

The built-in :data:`DEFAULT_SETTINGS` are read from ``defaults/scan_skipped_tests.yaml``, package
data of this package (``model-debugging scan --print_default_config`` prints it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from model_debugging.command_line import shorten
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


def _relative_inside(value: str, path: str | os.PathLike, key: str) -> str:
    """``value`` if it is a relative path that stays inside the checkout, else a :class:`ConfigError`."""
    shown = shorten(value)
    if not value.strip():
        raise ConfigError(path, "must not be empty", key=key)
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute():
        raise ConfigError(path, f"must be relative to the checkout, got {shown}", key=key)
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        raise ConfigError(path, f"must stay inside the checkout (no '..'), got {shown}", key=key)
    return value


def load_settings(path: str | os.PathLike) -> ScanSettings:
    """Read and validate a settings file; a :class:`ConfigError` names the file and the key.

    Paths must be relative and stay inside the checkout; the file pattern must not be empty.
    """
    data = validate_mapping(load_yaml(path), _FIELDS, path=path)
    files = []
    for index, item in enumerate(data["common_test_files"]):
        prefix = f"common_test_files[{index}]."
        entry = validate_mapping(item, _FILE_FIELDS, path=path, prefix=prefix)
        files.append(CommonTestFile(_relative_inside(entry["path"], path, prefix + "path"), entry["origin"]))
    if not files:
        raise ConfigError(path, "must list at least one file", key="common_test_files")
    models_dir = _relative_inside(data["models_dir"], path, "models_dir")
    if not data["test_file_pattern"].strip():
        raise ConfigError(path, "must not be empty (it would match no file)", key="test_file_pattern")
    return ScanSettings(tuple(files), models_dir, data["test_file_pattern"])


DEFAULT_SETTINGS = load_settings(BUILT_IN_CONFIG)
