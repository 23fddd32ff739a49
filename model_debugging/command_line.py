"""The conventions every ``model-debugging`` subcommand and ``utils/`` script follows, as shared helpers.

The console script itself (which subcommand runs) is :mod:`model_debugging.cli`; this module holds
what the subcommands' own parsers share:

- Exit codes: :data:`EXIT_OK` (0) the work was done and found nothing to flag, :data:`EXIT_FINDING`
  (1) it found something to flag (new skips, a divergence), :data:`EXIT_USAGE` (2) the input was
  unusable (bad arguments, config, checkout or file); nothing was written then. Ctrl-C ends a command
  with exit 130 (:mod:`model_debugging.console`).
- Errors are one line on stderr, ``<prog>: error: <what was wrong>``, never a traceback.
- Program names: ``model-debugging <command>``, or the script's path for a ``utils/`` wrapper.
- Flags have one spelling each, in snake_case like upstream's ``--test_method_name`` and
  ``--output_dir``; a command with a built-in config prints it with ``--print_default_config``
  (:func:`add_default_config_option`), a copy to edit and pass back with ``--config``.
- Output paths are checked before any work (:func:`outputs_problem`, :func:`output_dir_problem`):
  each folder is tried by creating a file in it, and no output option may name a file the command
  reads, whatever the symlinks or hard links in between. A write that fails later all the same is
  one line naming the option and the path (:func:`writing_output`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
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


class _PrintFile(argparse.Action):
    def __init__(self, option_strings, dest, path: Path, help: str):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.path = path

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:
        sys.stdout.write(self.path.read_text(encoding="utf-8"))
        parser.exit(EXIT_OK)


def add_default_config_option(parser: argparse.ArgumentParser, path: Path) -> None:
    """Add ``--print_default_config``: print the built-in config file ``path`` and exit 0."""
    parser.add_argument(
        "--print_default_config",
        action=_PrintFile,
        path=path,
        help="print the built-in config (YAML with comments) and exit: a copy to edit and pass to --config",
    )


def fail(prog: str, message: str) -> int:
    """Print ``message`` as the one-line error of ``prog`` and return :data:`EXIT_USAGE`."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


# what the `debugger` extra adds to the base install
DEBUGGER_EXTRA_MODULES = frozenset({"torch", "safetensors"})


def missing_extra(module: str) -> str:
    """Why a name or command is unavailable: ``module`` (torch or safetensors) is not installed."""
    return (
        f"this needs {module}, which the base install leaves out: install the debugger extra "
        "(pip install 'model-debugging[debugger]')"
    )


class OutputWriteError(Exception):
    """An output that could not be written after all (disk full, a FIFO nobody reads), as one line naming its option."""


@contextlib.contextmanager
def writing_output(option: str) -> Iterator[None]:
    """Turn an ``OSError`` raised while writing the output of ``option`` into an :class:`OutputWriteError`."""
    try:
        yield
    except OSError as error:
        shown = f" {error.filename}" if error.filename else ""
        raise OutputWriteError(f"cannot write {option}{shown}: {error.strerror or error}") from error


def positive_int(text: str) -> int:
    """argparse ``type`` for counts such as ``--jobs``: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {shorten(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def tolerance(text: str) -> float:
    """argparse ``type`` for ``--atol``/``--rtol``: a number of at least 0 (not NaN)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {shorten(repr(text))}")
    return value


def regular_expression(text: str) -> re.Pattern[str]:
    """argparse ``type`` for an option taking a regular expression (``--ignore``): compiled."""
    try:
        return re.compile(text)
    except re.error as error:
        raise argparse.ArgumentTypeError(f"invalid regular expression {text!r}: {error}") from None


def _first_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _folder_write_problem(folder: Path) -> str | None:
    """Why no file can be created in ``folder``, found by trying; None when one can.

    ``os.access`` says yes to root, and to /proc or /sys, where writing fails. So a temporary file
    is made in ``folder``, or, when it does not exist yet, a temporary folder where its first missing
    part would go; both are removed again. Nothing of the user's path is made: two commands writing
    to one new folder at once must not take it away from each other.
    """
    existing = _first_existing(folder)
    if existing == folder:
        try:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".model-debugging-probe."):
                return None
        except OSError as error:
            return f"cannot create files in {folder}: {error.strerror or error}"
    first_missing = next(path for path in (folder, *folder.parents) if path.parent == existing)
    try:
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".model-debugging-probe."))
    except OSError as error:
        return f"cannot create the folder {first_missing}: {error.strerror or error}"
    return None


def _dangling_link_problem(option: str, path: Path) -> str | None:
    """Why ``path`` cannot be written when it, or a folder on the way to it, is a symbolic link to
    nothing: writing through it would create the place it names (folders included), which the user
    never asked for; None otherwise."""
    for part in (path, *path.parents):
        if part.is_symlink() and not part.exists():
            where = "" if part == path else f": {part}"
            return (
                f"{option} {path}{where} is a symbolic link to {os.readlink(part)!r}, which "
                "does not exist; nothing is written through it"
            )
    return None


def output_dir_problem(directory: str | os.PathLike) -> str | None:
    """Why ``directory`` cannot receive output files (checked before any work), or None."""
    path = Path(directory).expanduser()
    if problem := _dangling_link_problem("--output_dir", path):
        return problem
    if path.exists() and not path.is_dir():
        return f"--output_dir {shorten(str(path))} exists and is not a directory"
    existing = _first_existing(path.absolute())
    if not existing.is_dir():
        return f"--output_dir {shorten(str(path))}: {existing} is not a directory"
    problem = _folder_write_problem(path.absolute())
    return f"--output_dir {shorten(str(path))}: {problem}" if problem else None


def _status(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)  # follows symlinks
    except (FileNotFoundError, NotADirectoryError):
        return None


def output_file_problem(
    option: str, file: str | os.PathLike, *, directory_must_exist: bool = False
) -> str | None:
    """Why ``file`` cannot be written by ``option`` (a directory, an unwritable place), or None.

    A FIFO or a character device (``/dev/stdout``, ``/dev/null``) is written into, a symlink
    writes the file it names; a block device, a socket, or a symlink to nothing (the file itself or
    a folder on its way) is refused. With
    ``directory_must_exist``, a missing parent directory is a problem too: for commands that
    write into an existing directory rather than create a mistyped one silently.
    """
    path = Path(file).expanduser()
    try:
        status = _status(path)
    except OSError as error:  # a symlink loop, a path too long, ...
        return f"{option} {shorten(str(path))}: {error.strerror or error}"
    if status is None and (problem := _dangling_link_problem(option, path)):
        return problem
    if status is not None and stat.S_ISDIR(status.st_mode):
        return f"{option} {shorten(str(path))} is a directory; give a file name"
    if status is not None and (stat.S_ISFIFO(status.st_mode) or stat.S_ISCHR(status.st_mode)):
        return None
    if status is not None and not stat.S_ISREG(status.st_mode):
        kind = "a block device" if stat.S_ISBLK(status.st_mode) else "not a regular file"
        return f"{option} {shorten(str(path))} is {kind}; give a file name, a FIFO or a device such as /dev/stdout"
    if path.is_symlink():  # the file is written where the link leads
        path = Path(os.path.realpath(path))
    if directory_must_exist and not path.parent.is_dir():
        return f"{option} {path}: the directory {path.parent} does not exist"
    existing = _first_existing(path.absolute().parent)
    if not existing.is_dir():
        return f"{option} {shorten(str(path))}: {existing} is not a directory"
    problem = _folder_write_problem(path.absolute().parent)
    return f"{option} {shorten(str(path))}: {problem}" if problem else None


@dataclass(frozen=True)
class InputFile:
    """A file a command reads (or a name it reads when present): no output option may write it."""

    path: Path
    description: str  # what it is to the user, e.g. "a file of the reference trace"


@dataclass(frozen=True)
class InputFolder:
    """A folder whose files of some kinds a command reads (a checkout's Python files under ``tests/``):
    no output option may replace one of them."""

    path: Path
    description: str  # e.g. "the checkout's tests/ folder"
    suffixes: tuple[str, ...] = (".py",)

    def holds(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return real.suffix in self.suffixes and real.is_relative_to(os.path.realpath(self.path))


def _identity(path: Path) -> tuple[int, int] | str:
    """The same value for two paths of one file: its device and inode, or for a missing file its real path."""
    try:
        status = _status(path)
    except OSError:
        status = None
    return (status.st_dev, status.st_ino) if status is not None else os.path.realpath(path)


def outputs_problem(
    outputs: Sequence[tuple[str, str | os.PathLike | None]],
    inputs: Sequence[InputFile] = (),
    *,
    directory_must_exist: bool = False,
    input_folders: Sequence[InputFolder] = (),
) -> str | None:
    """Why the ``(option, file)`` outputs of a command cannot be written, checked before any work; None when all can.

    Beyond :func:`output_file_problem`: an output that is, through symlinks or hard links, one of
    the command's ``inputs`` (a trace's JSON or tensor file, a scan result, a config), or the
    same file as another output option, is refused.
    """
    read = {}
    for input_file in inputs:
        read.setdefault(_identity(input_file.path), input_file)
    written: dict[tuple[int, int] | str, str] = {}
    for option, file in outputs:
        if file is None:
            continue
        path = Path(file).expanduser()
        identity = _identity(path)
        clash = read.get(identity)
        # a file the command reads is refused as such, without a probe file made beside it
        if clash is None or not path.is_file():
            problem = output_file_problem(option, file, directory_must_exist=directory_must_exist)
            if problem:
                return problem
        status = _status(path)
        if status is not None and not stat.S_ISREG(status.st_mode):
            continue  # a FIFO or a device: written into, never replaced
        if clash is not None:
            return (
                f"{option} {path} is {clash.description} ({clash.path}), "
                "which this command reads; choose another output file"
            )
        if status is not None:
            folder = next((folder for folder in input_folders if folder.holds(path)), None)
            if folder is not None:
                return (
                    f"{option} {path} is a {'/'.join(folder.suffixes)} file of {folder.description} ({folder.path}), "
                    "which this command reads; choose another output file"
                )
        if identity in written:
            return f"{written[identity]} and {option} name the same file {path}"
        written[identity] = option
    return None
