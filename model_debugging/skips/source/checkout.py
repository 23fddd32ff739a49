"""The checkout a scan reads: is it one, which model test files it has, where a test module is."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from model_debugging.command_line import shorten
from model_debugging.config import ConfigError
from model_debugging.skips.source.pytest_settings import (
    PytestSettings,
    PytestSettingsError,
    read_pytest_settings,
)
from model_debugging.skips.source.settings import ScanSettings


class CheckoutError(Exception):
    """The folder is not a transformers checkout: the message says what is missing and where."""


def check_checkout(repo: Path, settings: ScanSettings, described: str | None = None) -> None:
    """Raise :class:`CheckoutError` unless ``repo`` holds the settings' first common file and models
    folder, both inside it (also through symlinks). ``described`` names a ``repo`` the user did not
    give (a revision exported to a temporary folder): the message then names it instead of the folder."""
    if not repo.exists():
        raise CheckoutError(f"the checkout {repo} does not exist")
    if not repo.is_dir():
        raise CheckoutError(f"the checkout {repo} is not a folder; give the root of a transformers checkout")
    root = repo.resolve()
    for relative in (settings.models_dir, *(common.path for common in settings.common_test_files)):
        if not (root / relative).resolve().is_relative_to(root):  # also through symlinks
            raise CheckoutError(
                f"{shorten(relative)} leads outside the checkout {root}; settings paths must stay inside it"
            )
    first_common = settings.common_test_files[0].path
    for relative, kind in ((first_common, "file"), (settings.models_dir, "folder")):
        target = repo / relative
        if not (target.is_file() if kind == "file" else target.is_dir()):
            if described is not None:
                raise CheckoutError(
                    f"{described} is not a transformers checkout: it has no {kind} {relative}"
                )
            # --repo src/ or tests/, or run from inside the checkout: name the root above it
            above = next((parent for parent in root.parents if (parent / first_common).is_file()), None)
            fix = (
                f"pass --repo {above}, the checkout's root"
                if above
                else "run from the checkout root or pass --repo PATH"
            )
            raise CheckoutError(
                f"not a transformers checkout: {kind} {relative} is missing (looked for {target.resolve()}); {fix}"
            )


def checkout_pytest_settings(repo: Path) -> PytestSettings:
    """The checkout's pytest settings (what pytest collects); a malformed file is a CheckoutError."""
    try:
        return read_pytest_settings(repo)
    except PytestSettingsError as error:
        raise CheckoutError(str(error)) from None


def find_model_test_files(repo: Path, settings: ScanSettings, pytest: PytestSettings) -> list[str]:
    """Relative paths of model test files, sorted (their folder name is the model name): the files
    pytest collects (its ``python_files``) whose name matches the settings' pattern."""
    models_dir = repo / settings.models_dir
    top, relative_top = str(models_dir), models_dir.relative_to(repo).as_posix()
    found = []
    for root, dirs, files in os.walk(models_dir):
        dirs[:] = [name for name in dirs if not name.startswith((".", "__pycache__"))]
        folder = relative_top + root[len(top) :].replace(os.sep, "/")
        for name in fnmatch.filter(files, settings.test_file_pattern):
            if pytest.collects_file(name):
                found.append(f"{folder}/{name}")
    if not found:
        raise CheckoutError(
            f"no model test file: no file under {settings.models_dir} matches test_file_pattern "
            f"{shorten(repr(settings.test_file_pattern))} among those pytest collects (python_files)"
        )
    return sorted(found)


def model_of(path: str) -> str:
    """The model a test file belongs to: the name of its folder."""
    return Path(path).parent.name


def models_of(model_files: list[str]) -> dict[str, list[str]]:
    """Model name (the folder) -> its test files."""
    model_paths: dict[str, list[str]] = {}
    for path in model_files:
        model_paths.setdefault(model_of(path), []).append(path)
    return model_paths


def module_path(repo: Path, module: str) -> str | None:
    """The file of the dotted ``module`` in ``repo`` (a module or a package), or None."""
    relative = module.replace(".", "/")
    for candidate in (f"{relative}.py", f"{relative}/__init__.py"):
        if (repo / candidate).is_file():
            return candidate
    return None


def configured_paths_problem(repo: Path, settings: ScanSettings, config: str | os.PathLike) -> str | None:
    """Why a path the ``config`` file names is not in the checkout ``repo`` (its file, key and value),
    or None: a typo in the config is the config's error, not a sign of a wrong checkout."""
    if not repo.is_dir():
        return None  # no checkout at all: check_checkout says so
    named = [("models_dir", settings.models_dir, "folder")]
    named.append(("common_test_files[0].path", settings.common_test_files[0].path, "file"))
    for key, relative, kind in named:
        target = repo / relative
        if not (target.is_file() if kind == "file" else target.is_dir()):
            return str(
                ConfigError(
                    config, f"no {kind} {shorten(relative)} in the checkout {repo.resolve()}", key=key
                )
            )
    return None
