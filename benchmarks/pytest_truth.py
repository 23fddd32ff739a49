"""Reduce pytest junit XML files to compact truth rows, and read them back.

A row is ``(model, test, test_class, outcome, reason)`` for one test case of a model test file.
``outcome`` is passed, failed, timeout (pytest-timeout stopped it: it ran past the skip checks at
the top of its body, though not necessarily past a skip inside a loop), skipped or xfailed;
``reason`` is the skip message, or the first line of the failure message. The rows are stored as
gzip'd CSV behind a header naming what the run covered (``label``, ``tests``, ``models``,
``uncollected``, ``incomplete``), so the comparison reruns in seconds without pytest:

    python benchmarks/pytest_truth.py --junit /tmp/truth/junit_*.xml --tests_file /tmp/truth/chunks.txt \\
        --models afmoe bloom ... --label "transformers 2026-03-30, CPU, no RUN_SLOW" \\
        --output benchmarks/data/pytest_truth.csv.gz

``--collected FILE ...`` takes ``pytest --collect-only -q`` listings of the same selection: a model
with a collected test case that has no junit case (the run stopped early, say a worker crashed) is
left out as incomplete, so a test it never ran is not mistaken for one it does not have.

``--rerun FILE ...`` takes junit XML of models run again, each alone in its own pytest process (a
model the group run left incomplete, or one whose tests failed on state an earlier test leaked): every
model with a case there takes all its rows from the rerun, none from the group run. The header's
``rerun`` line names them.

Unreadable input (a junit file that is not XML, an empty tests file) is one line on stderr and
exit code 2; the output is replaced atomically, never left half-written.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Outcome = Literal["passed", "failed", "timeout", "skipped", "xfailed"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "timeout", "skipped", "xfailed")
TIMEOUT_MESSAGE = re.compile(r"Timeout \(>[\d.]+s\) from pytest-timeout")
REASON_LENGTH = 200


class TruthInputError(Exception):
    """A junit or truth file that cannot be read; the message names the file."""


@dataclass(frozen=True)
class TruthRow:
    model: str
    test: str
    test_class: str
    outcome: Outcome
    reason: str


def _case_outcome(case: ElementTree.Element) -> tuple[Outcome, str]:
    skipped = case.find("skipped")
    if skipped is not None:
        if skipped.get("type") == "pytest.xfail":
            return "xfailed", ""
        return "skipped", skipped.get("message", "")
    problem = case.find("failure")
    if problem is None:
        problem = case.find("error")
    if problem is None:
        return "passed", ""
    message = (problem.get("message") or "").strip()
    if TIMEOUT_MESSAGE.search(message):
        return "timeout", ""
    return "failed", " ".join(message.split())[:REASON_LENGTH]


def _test_name(case_name: str, tests: set[str] | None) -> str:
    """The test function a case belongs to: ``test_x[param]`` (pytest's parametrize) and
    ``test_x_0_param`` (``parameterized.expand``, which adds one method per parameter) are ``test_x``."""
    name = case_name.split("[")[0]
    expanded = re.fullmatch(r"(test_\w+?)_\d+(?:_\w+)?", name)
    if tests is not None and name not in tests and expanded and expanded.group(1) in tests:
        return expanded.group(1)
    return name


def rows_from_junit(paths: list[str], tests: set[str] | None = None) -> tuple[list[TruthRow], set[str]]:
    """Rows of model test cases (``tests`` keeps only those names: ``-k`` matches substrings), and
    the models whose test file pytest could not collect."""
    rows = []
    uncollected = set()
    for path in paths:
        try:
            root = ElementTree.parse(path).getroot()
        except (OSError, ElementTree.ParseError) as error:
            raise TruthInputError(f"{path}: not a readable junit XML file ({error})") from None
        for case in root.iter("testcase"):
            # A module pytest could not import is one case named after the module: in its classname,
            # or (under xdist) in its name with an empty classname.
            parts = (case.get("classname") or case.get("name", "")).split(".")
            if len(parts) == 4 and parts[:2] == ["tests", "models"] and case.find("error") is not None:
                uncollected.add(parts[2])
                continue
            if len(parts) < 5 or parts[:2] != ["tests", "models"]:
                continue
            test = _test_name(case.get("name", ""), tests)
            if tests is not None and test not in tests:
                continue
            outcome, reason = _case_outcome(case)
            rows.append(TruthRow(parts[2], test, parts[-1], outcome, reason))
    return rows, uncollected


def replace_rerun_models(
    rows: list[TruthRow], uncollected: set[str], reruns: list[str], tests: set[str]
) -> tuple[list[TruthRow], set[str], set[str]]:
    """The rows and uncollected models once every model of the ``reruns`` junit files takes its
    outcome from them alone, and the set of those models."""
    if not reruns:
        return rows, uncollected, set()
    again, uncollected_again = rows_from_junit(reruns, tests)
    rerun = {row.model for row in again} | uncollected_again
    kept = [row for row in rows if row.model not in rerun]
    return kept + again, (uncollected - rerun) | uncollected_again, rerun


def incomplete_models(listings: list[str], rows: list[TruthRow], tests: set[str]) -> set[str]:
    """Models with a collected case of ``tests`` that no row records."""
    seen = {(row.model, row.test_class, row.test) for row in rows}
    incomplete = set()
    for listing in listings:
        try:
            lines = Path(listing).read_text().splitlines()
        except OSError as error:
            raise TruthInputError(
                f"{listing}: cannot read the collected listing ({error.strerror})"
            ) from None
        for line in lines:
            match = re.match(r"tests/models/(\w+)/\S+\.py::(\w+)::(\w+)", line)
            if (
                match
                and match.group(3) in tests
                and (match.group(1), match.group(2), match.group(3)) not in seen
            ):
                incomplete.add(match.group(1))
    return incomplete


def write_truth(path: Path, rows: list[TruthRow], header: dict[str, str]) -> None:
    text = io.StringIO()
    for key, value in header.items():
        text.write(f"# {key}: {value}\n")
    writer = csv.writer(text)
    writer.writerow(["model", "test", "test_class", "outcome", "reason"])
    for row in sorted(rows, key=lambda row: (row.model, row.test, row.test_class)):
        writer.writerow([row.model, row.test, row.test_class, row.outcome, row.reason])
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "wb") as stream:
        stream.write(gzip.compress(text.getvalue().encode(), mtime=0))
    os.replace(temporary, path)


def read_truth(path: Path) -> tuple[dict[str, str], list[TruthRow]]:
    """The header (``tests``, ``models``, ``label``, ...) and the rows of a truth file."""
    try:
        lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise TruthInputError(f"{path}: not a readable truth file ({error})") from None
    header: dict[str, str] = {}
    body = []
    for line in lines:
        match = re.match(r"# (\w+): (.*)", line)
        if match and not body:
            header[match.group(1)] = match.group(2)
        else:
            body.append(line)
    rows = []
    for number, row in enumerate(csv.DictReader(body), start=len(header) + 2):
        if row.get("outcome") not in OUTCOMES:
            raise TruthInputError(f"{path}: line {number}: unknown outcome {row.get('outcome')!r}")
        rows.append(TruthRow(**row))
    if "tests" not in header or "models" not in header:
        raise TruthInputError(f"{path}: the header has no 'tests' or 'models' line")
    return header, rows


def tests_named_in(path: str) -> list[str]:
    """The test_* words of a text file, sorted."""
    try:
        tests = sorted(set(re.findall(r"\btest_\w+", Path(path).read_text())))
    except OSError as error:
        raise TruthInputError(f"{path}: cannot read the tests file ({error.strerror})") from None
    if not tests:
        raise TruthInputError(f"{path}: names no test_* function")
    return tests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--junit", nargs="+", required=True, help="junit XML files written by pytest")
    parser.add_argument("--tests_file", required=True, help="text file whose test_* words are the tests run")
    parser.add_argument("--label", default="", help="what was run (snapshot, machine, flags, coverage)")
    parser.add_argument(
        "--models", nargs="+", required=True, help="every model whose test files pytest was given"
    )
    parser.add_argument(
        "--collected", nargs="*", default=[], help="`pytest --collect-only -q` listings of the same selection"
    )
    parser.add_argument(
        "--rerun",
        nargs="*",
        default=[],
        help="junit XML of models run again alone: their rows replace the group's",
    )
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    try:
        tests = tests_named_in(args.tests_file)
        rows, uncollected = rows_from_junit(args.junit, set(tests))
        rows, uncollected, rerun = replace_rerun_models(rows, uncollected, args.rerun, set(tests))
        incomplete = incomplete_models(args.collected, rows, set(tests))
    except TruthInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    models = sorted(set(args.models) - uncollected - incomplete)
    kept = set(models)
    rows = [row for row in rows if row.model in kept]
    header = {
        "label": args.label,
        "tests": " ".join(tests),
        "models": " ".join(models),
        "uncollected": " ".join(sorted(uncollected)),
        "incomplete": " ".join(sorted(incomplete & set(args.models))),
        "rerun": " ".join(sorted(rerun & kept)),
    }
    write_truth(Path(args.output), rows, header)
    print(f"{len(rows)} rows, {len(models)} models, {len(tests)} tests -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
