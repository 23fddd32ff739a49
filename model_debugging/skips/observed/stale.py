"""Stale-skip candidates: skips written in the test files whose reason does not name the machine.

A skip whose reason is a bug or a missing feature may be obsolete: the test would pass now. Each
candidate is one skip (file, line, reason) with the (model, test) pairs it skips; with ``ages``, the
date git gives the skip's line (``git blame``, slow on a long history); given a run with skip
decorators ignored (our pytest plugin's ``--observed_ignore_skips``), what each pair did then.
Only decorators (on the test, its class, ``pytestmark``) can be ignored by such a run; a skip in a
test's body, its ``setUp``, a no-op override or a class flag is listed, never rerun.
"""

from __future__ import annotations

import ast
import fnmatch
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from model_debugging.skips.observed.environment import names_environment
from model_debugging.skips.observed.join import JoinedPair
from model_debugging.skips.records.test_files import SkipKind
from model_debugging.skips.results.scan_result import TestResult
from model_debugging.skips.source.files import read_source
from model_debugging.skips.source.git_reads import run_git
from model_debugging.skips.source.settings import ScanSettings

RERUNNABLE = frozenset({SkipKind.DECORATOR, SkipKind.CLASS_DECORATOR, SkipKind.PYTESTMARK})
# skips decided at run time from the library are the model's nature, not something someone wrote
_WRITTEN = frozenset(SkipKind) - {SkipKind.RUNTIME}
_WINDOW = 20  # lines searched for the skip itself around the line the scan reports


@dataclass(frozen=True)
class SkipAge:
    commit: str
    date: str  # the author date of the commit that last wrote the skip's line, ISO
    days: int  # before the checkout's commit


@dataclass(frozen=True)
class StaleSkip:
    """One written skip and every (model, test, test class) it skips."""

    file: str
    line: int
    reason: str
    kind: SkipKind
    pairs: tuple[tuple[str, str, str | None], ...]
    age: SkipAge | None = None
    rerun: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (model, test) -> what it did

    @property
    def rerunnable(self) -> bool:
        return self.kind in RERUNNABLE

    @property
    def now_passes(self) -> bool:
        """A run with the skip ignored saw every one of its pairs, and each passed."""
        return (
            bool(self.rerun) and len(self.rerun) == len(self.pairs) and set(self.rerun.values()) == {"passed"}
        )

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "reason": self.reason,
            "kind": self.kind.value,
            "pairs": [{"model": model, "test": test, "test_class": cls} for model, test, cls in self.pairs],
            "age": None if self.age is None else vars(self.age),
            "rerunnable": self.rerunnable,
            "rerun": [
                {"model": model, "test": test, "outcome": what} for (model, test), what in self.rerun.items()
            ],
            "now_passes": self.now_passes,
        }


def stale_skip_candidates(tests: Mapping[str, TestResult]) -> list[StaleSkip]:
    """Every written skip of the scan whose reason does not name the machine, by file and line."""
    grouped: dict[tuple[str, int, str, SkipKind], list[tuple[str, str, str | None]]] = defaultdict(list)
    for name, result in tests.items():
        for skip in result.skips:
            if skip.kind in _WRITTEN and skip.file is not None and not names_environment(skip.reason):
                grouped[skip.file, skip.line, skip.reason, skip.kind].append(
                    (skip.model, name, skip.test_class)
                )
    return [
        StaleSkip(file, line, reason, kind, tuple(sorted(pairs)))
        for (file, line, reason, kind), pairs in sorted(grouped.items(), key=lambda item: item[0][:2])
    ]


def rerun_outcome(pair: JoinedPair) -> str:
    """failed (some item failed or errored), passed (checking something: it reached an assertion,
    or, where they were not counted, its test holds one), passed without checking anything (an empty body: nothing learned), or
    skipped (still: the run could not ignore the skip)."""
    outcomes = {item.outcome.value for item in pair.seen}
    if outcomes & {"failed", "error", "xfailed"}:
        return "failed"
    passes = [item for item in pair.seen if item.outcome.value in ("passed", "xpassed")]
    if any(item.assertions > 0 if item.assertions is not None else item.checks for item in passes):
        return "passed"
    return "passed checking nothing" if passes else "skipped"


def with_reruns(
    candidates: Iterable[StaleSkip], runs: Mapping[tuple[str, str], JoinedPair]
) -> list[StaleSkip]:
    """The candidates with what runs with skip decorators ignored did to their pairs."""
    found = []
    for candidate in candidates:
        rerun = {
            (model, test): rerun_outcome(runs[test, model])
            for model, test, _ in candidate.pairs
            if (test, model) in runs
        }
        found.append(replace(candidate, rerun=rerun))
    return found


def rerun_selection(candidates: Iterable[StaleSkip], repo: Path, settings: ScanSettings) -> list[str]:
    """``file::Class::test`` of every pair of the rerunnable candidates, for our plugin's
    ``--observed_select`` (the file is the model test file that defines the class)."""
    selected = set()
    for candidate in candidates:
        if candidate.rerunnable:
            for model, test, test_class in candidate.pairs:
                if test_class is not None:
                    selected.update(
                        f"{path}::{test_class}::{test}"
                        for path in _files_defining(repo, settings, model, test_class)
                    )
    return sorted(selected)


def _files_defining(repo: Path, settings: ScanSettings, model: str, test_class: str | None) -> list[str]:
    """The model's test files; only the one that defines ``test_class`` when one does."""
    folder = Path(settings.models_dir, model)
    paths = sorted(
        path.relative_to(repo).as_posix()
        for path in (repo / folder).glob("*.py")
        if fnmatch.fnmatch(path.name, settings.test_file_pattern)
    )
    defining = [path for path in paths if test_class is not None and test_class in _class_names(repo / path)]
    return defining or paths


def _class_names(path: Path) -> set[str]:
    try:
        tree = ast.parse(read_source(path))
    except (OSError, SyntaxError, ValueError):
        return set()
    return {node.name for node in tree.body if isinstance(node, ast.ClassDef)}


# -- ages from git -------------------------------------------------------------------------------
def with_ages(candidates: list[StaleSkip], repo: Path) -> list[StaleSkip]:
    """The candidates with the age git blame gives their skip's line (in the checkout's files; a
    flag guard's line is the common test's, not the model's flag's: it gets none)."""
    head_time = _git(repo, "log", "-1", "--format=%ct", "HEAD")
    if head_time is None:
        return candidates
    by_file: dict[str, dict[int, int]] = defaultdict(dict)  # file -> reported line -> skip's line
    for candidate in candidates:
        if candidate.kind is not SkipKind.FLAG_GUARD:
            lines = _source_lines(repo / candidate.file)
            by_file[candidate.file][candidate.line] = skip_line(lines, candidate.line, candidate.kind)
    blamed: dict[tuple[str, int], SkipAge] = {}
    for file, lines in by_file.items():
        found = _blame(repo, file, sorted(set(lines.values())), int(head_time))
        blamed.update({(file, reported): found[line] for reported, line in lines.items() if line in found})
    return [replace(candidate, age=blamed.get((candidate.file, candidate.line))) for candidate in candidates]


def _source_lines(path: Path) -> list[str]:
    try:
        return read_source(path).decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def skip_line(lines: list[str], line: int, kind: SkipKind) -> int:
    """The line that writes the skip reported at ``line`` (a ``def`` or ``class`` line): the skip
    decorator above it, or the skip call in its body; ``line`` itself when none is seen."""
    if kind is SkipKind.NOOP_OVERRIDE or not 0 < line <= len(lines):
        return line
    if kind in (SkipKind.DECORATOR, SkipKind.CLASS_DECORATOR):
        candidates = range(line - 1, max(0, line - 1 - _WINDOW), -1)
    else:
        candidates = range(line, min(len(lines), line + _WINDOW) + 1)
    for number in candidates:
        if "skip" in lines[number - 1].lower():
            return number
    return line


def _git(repo: Path, *args: str) -> str | None:
    try:
        found = run_git(repo, *args)
    except OSError:
        return None
    return found.stdout if found.returncode == 0 else None


def _blame(repo: Path, file: str, lines: list[int], head_time: int) -> dict[int, SkipAge]:
    ranges = [argument for line in lines for argument in ("-L", f"{line},{line}")]
    output = _git(repo, "blame", "--porcelain", *ranges, "--", file)
    if output is None:
        return {}
    commit_of: dict[int, str] = {}
    times: dict[str, int] = {}
    commit = None
    for text in output.splitlines():
        parts = text.split()
        if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit() and parts[2].isdigit():
            commit = parts[0]
            commit_of[int(parts[2])] = commit
        elif text.startswith("author-time ") and commit is not None:
            times[commit] = int(parts[1])
    ages = {}
    for line, commit in commit_of.items():
        if commit in times and set(commit) != {"0"}:  # all zeros: not committed yet
            written = times[commit]
            date = datetime.fromtimestamp(written, tz=timezone.utc).date().isoformat()
            ages[line] = SkipAge(commit[:10], date, max(0, (head_time - written) // 86400))
    return ages
