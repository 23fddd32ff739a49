"""Summary lines for the scanned files pytest cannot collect: those that do not parse, and those
whose import fails in another file (named once for all the files that import it)."""

from __future__ import annotations

from collections.abc import Sequence

from model_debugging.skips.records.test_files import CANNOT_IMPORT, ParseError


def broken_file_lines(errors: Sequence[ParseError], *, new: bool) -> list[str]:
    """A line for the files that do not parse, and one for those pytest cannot import; ``new``:
    they did before (the PR check's head against its base, a scan against the previous one)."""
    lines = []
    unparsable = [error for error in errors if error.cause is None]
    unimportable = [error for error in errors if error.cause is not None]
    if unparsable:
        lines.append(
            f"⚠️ {len(unparsable)} scanned file(s) {'no longer parse' if new else 'do not parse'}, so pytest "
            "collects none of their tests: "
            + first_five([f"{error.path}, line {error.line}: {error.message}" for error in unparsable])
            + "."
        )
    if unimportable:
        lines.append(
            f"⚠️ pytest can{' no longer' if new else 'not'} import {len(unimportable)} scanned file(s), so it "
            f"collects none of their tests: {_by_cause(unimportable)}."
        )
    return lines


def first_five(items: list[str]) -> str:
    return "; ".join(items[:5]) + (f"; and {len(items) - 5} more" if len(items) > 5 else "")


def _by_cause(errors: list[ParseError]) -> str:
    """Files whose import fails in another file, grouped by that file (named once for all that import it)."""
    files_of: dict[ParseError, list[str]] = {}
    for error in errors:
        files_of.setdefault(error.cause, []).append(f"{error.path}, line {error.line}")
    return "; ".join(
        f"{len(files)} import {cause.path}, directly or not, whose import fails at line {cause.line} "
        f"({cause.message.removeprefix(CANNOT_IMPORT)}): {first_five(files)}"
        for cause, files in files_of.items()
    )
