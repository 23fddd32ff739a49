"""The conventions every ``model-debugging`` subcommand and ``utils/`` script follows.

- Exit codes: :data:`EXIT_OK` (0) the work was done and found nothing to flag, :data:`EXIT_FINDING`
  (1) it found something to flag (new skips, a divergence), :data:`EXIT_USAGE` (2) the input was
  unusable (bad arguments, config, checkout or file); nothing was written then.
- Errors are one line on stderr, ``<prog>: error: <what was wrong>``, never a traceback.
- Program names: ``model-debugging <command>``, or the script's path for a ``utils/`` wrapper.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

EXIT_OK, EXIT_FINDING, EXIT_USAGE = 0, 1, 2
# values quoted in messages are cut to this many characters (a 10 KB test name is not echoed whole)
MAX_SHOWN = 80


def shorten(value: object, limit: int = MAX_SHOWN) -> str:
    """``repr(value)``, or its first ``limit`` characters and how many more there were."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line and exit :data:`EXIT_USAGE`."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {shorten(message, 300)}\n")


def fail(prog: str, message: str) -> int:
    """Print ``message`` as the one-line error of ``prog`` and return :data:`EXIT_USAGE`."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def positive_int(text: str) -> int:
    """argparse ``type`` for counts such as ``--jobs``: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {shorten(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _first_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def output_dir_problem(directory: str | os.PathLike) -> str | None:
    """Why ``directory`` cannot receive output files (checked before any work), or None."""
    path = Path(directory).expanduser()
    if path.exists() and not path.is_dir():
        return f"--output_dir {shorten(str(path))} exists and is not a directory"
    existing = _first_existing(path.absolute())
    if not existing.is_dir():
        return f"--output_dir {shorten(str(path))}: {existing} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"--output_dir {shorten(str(path))}: {existing} is not writable"
    return None


def output_file_problem(
    option: str, file: str | os.PathLike, *, directory_must_exist: bool = False
) -> str | None:
    """Why ``file`` cannot be written by ``option`` (a directory, an unwritable place), or None.

    With ``directory_must_exist``, a missing parent directory is a problem too: for commands that
    write into an existing directory rather than create a mistyped one silently.
    """
    path = Path(file).expanduser()
    if path.is_dir():
        return f"{option} {shorten(str(path))} is a directory; give a file name"
    if directory_must_exist and not path.parent.is_dir():
        return f"{option} {path}: the directory {path.parent} does not exist"
    existing = _first_existing(path.absolute().parent)
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        return f"{option} {shorten(str(path))}: {existing} is not a writable directory"
    return None
