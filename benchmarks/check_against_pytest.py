"""Compare the scanner's answer with what pytest really did on a transformers checkout.

The truth is compact data committed under ``benchmarks/data/`` (see ``pytest_truth.py`` for how
it is made from pytest's junit XML), so the comparison reruns in seconds without pytest:

    python benchmarks/check_against_pytest.py --repo /path/to/transformers \\
        --truth benchmarks/data/pytest_truth.csv.gz

``--junit FILE ...`` reads junit XML directly instead (then ``--tests_file`` names the tests run).

For every (model, test) pair of the truth, pytest's verdict is "skipped" when every test class
of the model skipped it, "ran" otherwise; a pair of a collected model with no test case at all
is "not collected" (no class of the model has the test, or an attribute shadows it). Pairs that
pytest skipped for an environment reason (GPU, slow, flash attention, a missing package) are left
out, and so are no-op overrides (pytest: passed; the scanner: skipped by design). Printed:
agreement over the scored pairs (an undecided pair counts as a disagreement), skipped precision
and recall, the undecided share, not-collected pairs the scanner calls ran, a per-test table and
every disagreement. Exit code 0 always.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.pytest_truth import TruthRow, read_truth, rows_from_junit  # noqa: E402
from model_debugging.skips import scan_repository  # noqa: E402

# Skip reasons that depend on the machine, not on the model.
ENVIRONMENT_REASON = re.compile(
    r"\b(gpus?|cuda|accelerators?|xpu|npu|hpu|mps|multi[- ]gpu)\b|flash|\bslow\b|test requires|"
    r"not installed|is not available|deepspeed|bitsandbytes|torchvision|timm|\bkernels\b|compute capability|"
    r"requires? .*(torch|optimum|quanto)",
    re.IGNORECASE,
)
VERDICTS = ("ran", "skipped", "undecided", "not_applicable")


def pytest_verdicts(
    rows: list[TruthRow], models: list[str], tests: list[str]
) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """(model, test) -> (ran | skipped | environment | not_collected, skip reasons)."""
    by_pair: dict[tuple[str, str], list[TruthRow]] = defaultdict(list)
    for row in rows:
        by_pair[row.model, row.test].append(row)
    verdicts = {}
    for model in models:
        for test in tests:
            cases = by_pair.get((model, test), [])
            reasons = [case.reason for case in cases if case.outcome == "skipped"]
            if not cases:
                verdicts[model, test] = ("not_collected", [])
            elif len(reasons) < len(cases):
                verdicts[model, test] = ("ran", reasons)
            elif all(ENVIRONMENT_REASON.search(reason) for reason in reasons):
                verdicts[model, test] = ("environment", reasons)
            else:
                verdicts[model, test] = ("skipped", reasons)
    return verdicts


def scanner_verdicts(results: dict, tests: list[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """(model, test) -> (verdict, detail) from the scan's JSON entries."""
    found = {}
    for test in tests:
        entry = results.get(test)
        if entry is None:
            continue
        skips = {item["model"]: item for item in entry.get("skips", [])}
        undecided = {
            line.split(": ", 1)[0]: line.split(": ", 1)[1]
            for line in entry.get("conditions", [])
            if ": undecided: " in line
        }
        for verdict, key in zip(
            VERDICTS,
            ("models_ran", "models_skipped", "models_undecided", "models_not_applicable"),
            strict=True,
        ):
            for model in entry.get(key, []):
                skip = skips.get(model)
                detail = f"{skip['kind']}: {skip['reason']}" if skip else undecided.get(model, "")
                found[model, test] = (verdict, detail)
    return found


def compare(repo: str, header: dict[str, str], rows: list[TruthRow]) -> int:
    tests = header["tests"].split()
    models = header["models"].split()
    truth = pytest_verdicts(rows, models, tests)
    scanned = scanner_verdicts(scan_repository(repo).to_json(), tests)
    per_test: dict[str, Counter] = defaultdict(Counter)
    total: Counter = Counter()
    disagreements = []
    for (model, test), (actual, reasons) in sorted(truth.items()):
        predicted, detail = scanned.get((model, test), ("not_applicable", ""))
        counts = per_test[test]
        if actual == "environment":
            counts["environment"] += 1
            continue
        if actual == "not_collected":
            counts["not collected"] += 1
            if predicted == "ran":
                counts["not collected, called ran"] += 1
                disagreements.append(f"{model} / {test}: pytest collected nothing | scanner ran")
            continue
        if predicted == "skipped" and detail.startswith("noop_override") and actual == "ran":
            counts["noop"] += 1
            continue
        if predicted == "not_applicable":
            counts["scanner not applicable"] += 1
            disagreements.append(f"{model} / {test}: pytest {actual} | scanner not applicable")
            continue
        counts["scored"] += 1
        counts[f"{actual}->{predicted}"] += 1
        if predicted == actual:
            counts["agree"] += 1
        else:
            disagreements.append(
                f"{model} / {test}: pytest {actual} {reasons[:1]} | scanner {predicted} ({detail})"
            )
    for counts in per_test.values():
        total.update(counts)
    print(f"truth: {header.get('label', '')}")
    print(
        f"models: {len(models)} (uncollected by pytest, left out: {header.get('uncollected', '') or 'none'})"
    )
    print(f"tests: {len(tests)}")
    _summary("all tests", total)
    print()
    print(
        "| test | scored | agree | pytest skipped | scanner skipped (right) | undecided | env | not collected (called ran) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for test in tests:
        counts = per_test[test]
        skipped = sum(counts[f"skipped->{p}"] for p in VERDICTS)
        predicted_skipped = counts["skipped->skipped"] + counts["ran->skipped"]
        undecided = counts["skipped->undecided"] + counts["ran->undecided"]
        print(
            f"| {test} | {counts['scored']} | {counts['agree']} | {skipped} | {predicted_skipped} ({counts['skipped->skipped']}) "
            f"| {undecided} | {counts['environment']} | {counts['not collected']} ({counts['not collected, called ran']}) |"
        )
    print()
    for line in disagreements:
        print(f"  DISAGREE {line}")
    return 0


def _summary(title: str, counts: Counter) -> None:
    scored = counts["scored"]
    agree = counts["agree"]
    predicted_skipped = counts["skipped->skipped"] + counts["ran->skipped"]
    actual_skipped = sum(counts[f"skipped->{p}"] for p in VERDICTS)
    undecided = counts["skipped->undecided"] + counts["ran->undecided"]
    precision = counts["skipped->skipped"] / predicted_skipped if predicted_skipped else 1.0
    recall = counts["skipped->skipped"] / actual_skipped if actual_skipped else 1.0
    print(f"{title}: {agree} of {scored} scored (model, test) pairs agree ({agree / max(scored, 1):.2%})")
    print(
        f"  skipped precision {precision:.4f}, recall {recall:.4f} ({counts['skipped->skipped']} of {actual_skipped} pytest skips found)"
    )
    print(f"  undecided: {undecided} ({undecided / max(scored, 1):.2%} of scored pairs)")
    print(
        "  confusion (pytest->scanner): "
        + ", ".join(f"{key} {counts[key]}" for key in sorted(counts) if "->" in key)
    )
    print(
        f"  not-collected pairs called ran: {counts['not collected, called ran']} (of {counts['not collected']} not collected)"
    )
    print(
        f"  left out: {counts['environment']} environment skips, {counts['noop']} no-op overrides, "
        f"{counts['scanner not applicable']} pairs the scanner calls not applicable"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the transformers checkout pytest ran on")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--truth", help="compact truth written by benchmarks/pytest_truth.py")
    source.add_argument("--junit", nargs="+", help="junit XML file(s) written by pytest")
    parser.add_argument("--tests_file", help="with --junit: a file whose test_* words are the tests run")
    args = parser.parse_args(argv)
    if args.truth:
        header, rows = read_truth(Path(args.truth))
    else:
        if not args.tests_file:
            parser.error("--junit needs --tests_file")
        tests = sorted(set(re.findall(r"\btest_\w+", Path(args.tests_file).read_text())))
        rows, uncollected = rows_from_junit(args.junit, set(tests))
        models = sorted({row.model for row in rows} - uncollected)
        header = {
            "tests": " ".join(tests),
            "models": " ".join(models),
            "uncollected": " ".join(sorted(uncollected)),
        }
    return compare(args.repo, header, rows)


if __name__ == "__main__":
    sys.exit(main())
