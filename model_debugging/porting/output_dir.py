"""``debug_port``'s output directory: what it writes there, and how a later run knows its own.

A run writes the marker file ``.debug_port`` first, then ``reference/``, ``port/`` and
``reference_float32/`` (the traces), ``comparison.json``, ``comparison.html`` and ``renames.yaml``.
A later run replaces those only in a directory that holds the marker: names alone prove nothing
(a porter's own ``reference/`` and ``port/`` traces, recorded by hand as the replay guide shows,
are named so too). Any other directory that is not empty is refused, and nothing in it is touched.
"""

from __future__ import annotations

import shutil
from pathlib import Path

MARKER_NAME = ".debug_port"
RESULT_NAME = "comparison.json"
PAGE_NAME = "comparison.html"
RENAMES_NAME = "renames.yaml"
FLOAT32_NAME = "reference_float32"
TRACE_NAMES = ("reference", FLOAT32_NAME, "port")
_OURS = {MARKER_NAME, *TRACE_NAMES, RESULT_NAME, PAGE_NAME, RENAMES_NAME}


def output_dir_refusal(directory: Path) -> str | None:
    """Why ``directory`` cannot take a run's files (it is no directory, or holds files no run of
    ``debug_port`` wrote there), or None."""
    if directory.exists() and not directory.is_dir():
        return f"{directory} exists and is not a directory"
    if not directory.is_dir():
        return None
    names = sorted(path.name for path in directory.iterdir())
    others = [name for name in names if name not in _OURS] if MARKER_NAME in names else names
    if not others:
        return None
    unmarked = (
        "" if set(others) - _OURS else f"; it has no {MARKER_NAME} file: no run of debug_port wrote them"
    )
    return (
        f"{directory} holds files debug_port did not write ({', '.join(others[:3])}"
        f"{', ...' if len(others) > 3 else ''}{unmarked}): choose another output directory"
    )


def prepare_output_dir(directory: Path) -> None:
    """Make ``directory`` (checked by :func:`output_dir_refusal`) ready for a run: the traces of an
    earlier run removed (a link in their place is removed, never followed), the marker written."""
    for name in TRACE_NAMES:
        path = directory / name
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARKER_NAME).write_text(
        "written by model_debugging.debug_port: a later run may replace this directory's files\n"
    )
