"""What a scan reads of a checkout, named once: the PR check exports exactly these folders of the
base revision, and the CI cache key hashes them.

The scan reads the test files (the common files, every model's test files and the test modules they
import, all under ``tests/``) and the library's sources under ``src/<package>/``; nothing else.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from model_debugging.command_line import InputFolder
from model_debugging.skips.source.settings import ScanSettings

TESTS_FOLDER = "tests"  # imports of the test files are followed into this folder only
LIBRARY_FOLDER = "src"  # src/<package>/ holds the library (see parse/library/load.py)


def scanned_folders(settings: ScanSettings) -> tuple[str, ...]:
    """The top-level folders of a checkout a scan with ``settings`` reads, sorted."""
    written = [settings.models_dir, *(common.path for common in settings.common_test_files)]
    return tuple(sorted({TESTS_FOLDER, LIBRARY_FOLDER, *(PurePosixPath(path).parts[0] for path in written)}))


def scanned_input_folders(repo: str | os.PathLike, settings: ScanSettings) -> list[InputFolder]:
    """The folders of ``repo`` a scan reads, for the output checks: no output may replace a file in them."""
    return [
        InputFolder(Path(repo) / folder, f"the checkout's {folder}/ folder")
        for folder in scanned_folders(settings)
    ]


def package_depths(repo: Path, paths: Iterable[str]) -> dict[str, int]:
    """For each file of ``paths``, how many folders above it are packages (hold an ``__init__.py``),
    counting up from its own folder to the first that is not: pytest's default import mode names the
    module from there (``tests.models.x.test_modeling_x``), so a relative import may go up that many
    levels. Each folder is looked at once."""
    folders: dict[str, int] = {"": 0}

    def depth_of(folder: str) -> int:
        if folder not in folders:
            is_package = os.path.isfile(os.path.join(repo, folder, "__init__.py"))
            folders[folder] = 1 + depth_of(posixpath.dirname(folder)) if is_package else 0
        return folders[folder]

    return {path: depth_of(posixpath.dirname(path)) for path in paths}


def is_library_path(path: str) -> bool:
    """Whether the checkout-relative ``path`` is one of the library's sources (else a test file)."""
    return PurePosixPath(path).parts[:1] == (LIBRARY_FOLDER,)


def scanned_files_digest(repo: str | os.PathLike, settings: ScanSettings) -> str:
    """A digest of every Python file under the scanned folders of ``repo`` (paths and contents):
    equal digests, equal inputs of a scan."""
    repo = Path(repo)
    digest = hashlib.sha256()
    for folder in scanned_folders(settings):
        for root, dirs, files in os.walk(repo / folder):
            dirs[:] = sorted(name for name in dirs if name != "__pycache__" and not name.startswith("."))
            for name in sorted(files):
                if name.endswith(".py"):
                    path = Path(root, name)
                    digest.update(f"{path.relative_to(repo).as_posix()}\0".encode())
                    digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
