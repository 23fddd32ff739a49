"""Reduce pytest junit XML files to compact truth rows, and read them back.

A row is ``(model, test, test_class, outcome, reason)`` for one test case of a model test file;
``outcome`` is passed, failed, skipped or xfailed. The rows are stored as gzip'd CSV with a
header comment naming the snapshot and the tests the run covered, so the comparison reruns in
seconds without pytest:

    python benchmarks/pytest_truth.py --junit /tmp/truth/junit_*.xml --tests_file /tmp/truth/chunks.txt \\
        --label "transformers 2026-03-30, CPU, no RUN_SLOW" --output benchmarks/data/pytest_truth.csv.gz
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import re
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TruthRow:
    model: str
    test: str
    test_class: str
    outcome: str  # passed, failed, skipped, xfailed
    reason: str


def rows_from_junit(paths: list[str], tests: set[str] | None = None) -> tuple[list[TruthRow], set[str]]:
    """Rows of model test cases (``tests`` keeps only those names: ``-k`` matches substrings), and
    the models whose test file pytest could not collect."""
    rows = []
    uncollected = set()
    for path in paths:
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            parts = case.get("classname", "").split(".")
            if len(parts) == 4 and parts[:2] == ["tests", "models"] and case.find("error") is not None:
                uncollected.add(parts[2])
                continue
            if len(parts) < 5 or parts[:2] != ["tests", "models"]:
                continue
            test = case.get("name", "").split("[")[0]
            if tests is not None and test not in tests:
                continue
            skipped = case.find("skipped")
            if skipped is not None and skipped.get("type") == "pytest.xfail":
                outcome, reason = "xfailed", ""
            elif skipped is not None:
                outcome, reason = "skipped", skipped.get("message", "")
            elif case.find("failure") is not None or case.find("error") is not None:
                outcome, reason = "failed", ""
            else:
                outcome, reason = "passed", ""
            rows.append(TruthRow(parts[2], test, parts[-1], outcome, reason))
    return rows, uncollected


def write_truth(path: Path, rows: list[TruthRow], header: dict[str, str]) -> None:
    text = io.StringIO()
    for key, value in header.items():
        text.write(f"# {key}: {value}\n")
    writer = csv.writer(text)
    writer.writerow(["model", "test", "test_class", "outcome", "reason"])
    for row in sorted(rows, key=lambda row: (row.model, row.test, row.test_class)):
        writer.writerow([row.model, row.test, row.test_class, row.outcome, row.reason])
    path.write_bytes(gzip.compress(text.getvalue().encode(), mtime=0))


def read_truth(path: Path) -> tuple[dict[str, str], list[TruthRow]]:
    """The header (``tests``, ``models``, ``label``, ...) and the rows of a truth file."""
    header: dict[str, str] = {}
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    body = []
    for line in lines:
        match = re.match(r"# (\w+): (.*)", line)
        if match and not body:
            header[match.group(1)] = match.group(2)
        else:
            body.append(line)
    reader = csv.DictReader(body)
    return header, [TruthRow(**row) for row in reader]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--junit", nargs="+", required=True, help="junit XML files written by pytest")
    parser.add_argument("--tests_file", required=True, help="text file whose test_* words are the tests run")
    parser.add_argument("--label", default="", help="what was run (snapshot, machine, flags)")
    parser.add_argument(
        "--models", nargs="+", required=True, help="every model whose test files pytest was given"
    )
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    tests = sorted(set(re.findall(r"\btest_\w+", Path(args.tests_file).read_text())))
    rows, uncollected = rows_from_junit(args.junit, set(tests))
    models = sorted(set(args.models) - uncollected)
    header = {
        "label": args.label,
        "tests": " ".join(tests),
        "models": " ".join(models),
        "uncollected": " ".join(sorted(uncollected)),
    }
    write_truth(Path(args.output), rows, header)
    print(f"{len(rows)} rows, {len(models)} models, {len(tests)} tests -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
