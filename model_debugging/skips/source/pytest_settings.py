"""The checkout's own pytest settings that decide what pytest collects.

``python_files`` (which files are test modules), ``python_classes`` (which classes that are not a
``unittest.TestCase`` are test classes) and the ``--import-mode`` given in ``addopts`` (how a test
module is named, hence whether its relative imports need ``__init__.py`` files), read as pytest
reads them from the first configuration file at the checkout's root: ``pytest.ini`` (even empty),
``.pytest.ini``, ``pyproject.toml`` with a ``[tool.pytest.ini_options]`` (or ``[tool.pytest]``)
table, ``tox.ini`` with ``[pytest]``, ``setup.cfg`` with ``[tool:pytest]``. Without one, pytest's
defaults hold (transformers sets none of the three).
"""

from __future__ import annotations

import configparser
import fnmatch
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

_GLOB = frozenset("*?[")


class PytestSettingsError(ValueError):
    """The checkout's pytest configuration file cannot be read (pytest would refuse it too)."""


@dataclass(frozen=True)
class PytestSettings:
    python_files: tuple[str, ...] = ("test_*.py", "*_test.py")
    python_classes: tuple[str, ...] = ("Test",)
    import_mode: str = "prepend"

    def collects_file(self, name: str) -> bool:
        """Whether pytest collects a file of this name as a test module."""
        return any(fnmatch.fnmatch(name, pattern) for pattern in self.python_files)

    def collects_class(self, name: str) -> bool:
        """Whether pytest collects a class of this name that is not a ``unittest.TestCase``: the
        name starts with a pattern, or matches it as a glob."""
        return any(
            name.startswith(pattern) or (not _GLOB.isdisjoint(pattern) and fnmatch.fnmatch(name, pattern))
            for pattern in self.python_classes
        )

    @property
    def relative_imports_need_packages(self) -> bool:
        """``prepend`` and ``append`` name a module from the first folder above it without an
        ``__init__.py``; ``importlib`` names it from the root and imports it whatever the folders."""
        return self.import_mode != "importlib"


DEFAULT_PYTEST = PytestSettings()


def _words(value: object) -> tuple[str, ...]:
    """An ini value (words separated by spaces) or a TOML one (a string or a list of them)."""
    if isinstance(value, list):
        return tuple(str(item) for item in value)
    return tuple(shlex.split(str(value)))


def _settings(values: dict[str, object]) -> PytestSettings:
    defaults = PytestSettings()
    options = _words(values.get("addopts", ""))
    mode = defaults.import_mode
    for index, option in enumerate(options):
        if option.startswith("--import-mode="):
            mode = option.split("=", 1)[1]
        elif option == "--import-mode" and index + 1 < len(options):
            mode = options[index + 1]
    return PytestSettings(
        _words(values["python_files"]) if "python_files" in values else defaults.python_files,
        _words(values["python_classes"]) if "python_classes" in values else defaults.python_classes,
        mode,
    )


def _ini_section(path: Path, section: str) -> dict[str, object] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, configparser.Error, UnicodeDecodeError) as error:
        raise PytestSettingsError(f"{path}: not a readable ini file ({error})") from None
    return dict(parser[section]) if parser.has_section(section) else None


def read_pytest_settings(repo: Path) -> PytestSettings:
    """The settings of the configuration file pytest would use at ``repo`` (defaults without one)."""
    for name in ("pytest.ini", ".pytest.ini"):
        if (repo / name).is_file():
            return _settings(_ini_section(repo / name, "pytest") or {})
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file():
        try:
            tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise PytestSettingsError(f"{pyproject}: not valid TOML ({error})") from None
        table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        if isinstance(table, dict) and table:
            ini_options = table.get("ini_options")
            return _settings(ini_options if isinstance(ini_options, dict) else table)
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if (repo / name).is_file():
            values = _ini_section(repo / name, section)
            if values is not None:
                return _settings(values)
    return PytestSettings()
