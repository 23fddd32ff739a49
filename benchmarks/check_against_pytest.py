"""Compare the scanner's answer with what pytest really did on a transformers checkout.

The truth is compact data committed under ``benchmarks/data/`` (see ``pytest_truth.py`` for how
it is made from pytest's junit XML), so the comparison reruns in seconds without pytest:

    python benchmarks/check_against_pytest.py --repo /path/to/transformers \\
        --truth benchmarks/data/pytest_truth.csv.gz

``--junit FILE ...`` reads junit XML directly instead (then ``--tests_file`` names the tests run);
``--scan_result FILE`` compares an ``all_tests_scan_result.json`` already written by
``utils/scan_skipped_tests.py`` instead of scanning ``--repo`` again.

For every (model, test) pair of the truth, pytest's verdict is "skipped" when every test class of
the model skipped it, "ran" otherwise; a case stopped by pytest-timeout counts as ran (it got past
the skip checks at the top of its body), and the table counts the pairs that ran only that way. A
pair of a collected model with no test case at all is "not collected" (no class of the model has
the test, or an attribute shadows it). Left out of the score, and counted: pairs pytest skipped
in a class for an environment reason (GPU, slow, flash attention, a missing package: that class
would run on a full machine) and ran in none; pairs that only failed
on a model whose classes are import placeholders here (a test case failed with "requires the X
library but it was not found": the real classes never loaded, so the test could not reach its
skip checks); pairs whose every case that ran failed on the meta device an earlier test in the same
pytest worker left as torch's default ("Cannot copy out of meta tensor": the test never reached its
skip checks, so its truth is unknown until it is rerun alone); pairs whose every case that ran failed
to fetch a file from the Hub (the run is offline: the test never reached its skip checks); no-op overrides (pytest: passed; the scanner: skipped by design); and pairs the
scanner finds not applicable although pytest has a case of that name (a model's own test that
shares the common name). Printed: agreement over the scored pairs (an undecided pair counts as a
disagreement), skipped precision and recall, the undecided share, the wrong verdicts (ran called
skipped, skipped called ran, not collected called ran), a per-test table and every disagreement.
Exit code 0, or 2 for an unreadable truth or junit file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.pytest_truth import (  # noqa: E402
    TruthInputError,
    TruthRow,
    read_truth,
    rows_from_junit,
    tests_named_in,
)
from model_debugging import CheckoutError, scan_repository  # noqa: E402
from model_debugging.skips.observed.environment import (  # noqa: E402
    ENVIRONMENT_REASON,
    LEAKED_STATE_FAILURE,
    OFFLINE_FAILURE,
    PLACEHOLDER_FAILURE,
)

VERDICTS = ("ran", "skipped", "undecided", "not_applicable")
PytestVerdict = Literal["ran", "skipped", "environment", "placeholder", "leaked", "offline", "not_collected"]
LEFT_OUT: tuple[PytestVerdict, ...] = ("environment", "placeholder", "leaked", "offline")


@dataclass(frozen=True)
class PytestPair:
    verdict: PytestVerdict
    reasons: tuple[str, ...]  # skip messages, or the failure that made it a placeholder pair
    only_timeouts: bool = False  # ran, and every case that ran was stopped by pytest-timeout


def placeholder_models(rows: list[TruthRow]) -> dict[str, str]:
    """Model -> missing package, for models whose classes are import placeholders on the machine."""
    found = {}
    for row in rows:
        match = PLACEHOLDER_FAILURE.search(row.reason) if row.outcome == "failed" else None
        if match:
            found[row.model] = match.group(1)
    return found


def pytest_verdicts(
    rows: list[TruthRow], models: list[str], tests: list[str]
) -> dict[tuple[str, str], PytestPair]:
    by_pair: dict[tuple[str, str], list[TruthRow]] = defaultdict(list)
    for row in rows:
        by_pair[row.model, row.test].append(row)
    placeholders = placeholder_models(rows)
    verdicts = {}
    for model in models:
        for test in tests:
            cases = by_pair.get((model, test), [])
            reasons = tuple(case.reason for case in cases if case.outcome == "skipped")
            ran = [case for case in cases if case.outcome != "skipped"]
            if not cases:
                verdicts[model, test] = PytestPair("not_collected", ())
            elif model in placeholders and ran and all(case.outcome == "failed" for case in ran):
                verdicts[model, test] = PytestPair("placeholder", (f"requires {placeholders[model]}",))
            elif _all_failed_with(ran, LEAKED_STATE_FAILURE):
                verdicts[model, test] = PytestPair("leaked", (ran[0].reason,))
            elif _all_failed_with(ran, OFFLINE_FAILURE):
                verdicts[model, test] = PytestPair("offline", (ran[0].reason,))
            elif ran:
                timeouts = all(case.outcome == "timeout" for case in ran)
                verdicts[model, test] = PytestPair("ran", reasons, only_timeouts=timeouts)
            elif any(ENVIRONMENT_REASON.search(reason) for reason in reasons):
                # A class skipped for the machine would run on a full one: the model's verdict depends on it.
                verdicts[model, test] = PytestPair("environment", reasons)
            else:
                verdicts[model, test] = PytestPair("skipped", reasons)
    return verdicts


def _all_failed_with(ran: list[TruthRow], failure: re.Pattern) -> bool:
    """Every case that ran failed with ``failure``: none of them reached the test's skip checks."""
    return bool(ran) and all(case.outcome == "failed" and failure.search(case.reason) for case in ran)


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


def score(
    truth: dict[tuple[str, str], PytestPair], scanned: dict[tuple[str, str], tuple[str, str]]
) -> tuple[dict[str, Counter], list[str]]:
    """Per-test counters and one line per disagreement (wrong verdicts first)."""
    per_test: dict[str, Counter] = defaultdict(Counter)
    wrong, undecided, other = [], [], []
    for (model, test), actual in sorted(truth.items()):
        predicted, detail = scanned.get((model, test), ("not_applicable", ""))
        counts = per_test[test]
        evidence = (
            f"{actual.verdict}{' (timeout only)' if actual.only_timeouts else ''} {list(actual.reasons[:1])}"
        )
        line = f"{model} / {test}: pytest {evidence} | scanner {predicted} ({detail})"
        if actual.verdict in LEFT_OUT:
            counts[actual.verdict] += 1
        elif actual.verdict == "not_collected":
            counts["not collected"] += 1
            if predicted == "ran":
                counts["not collected, called ran"] += 1
                wrong.append(f"WRONG {line}")
        elif predicted == "skipped" and detail.startswith("noop_override") and actual.verdict == "ran":
            counts["noop"] += 1
        elif predicted == "not_applicable":
            counts["scanner not applicable"] += 1
            other.append(f"NOT APPLICABLE {line}")
        else:
            counts["scored"] += 1
            counts[f"{actual.verdict}->{predicted}"] += 1
            counts["ran only by timeout"] += actual.only_timeouts
            if predicted == actual.verdict:
                counts["agree"] += 1
            elif predicted == "undecided":
                undecided.append(f"UNDECIDED {line}")
            else:
                wrong.append(f"WRONG {line}")
    return per_test, wrong + other + undecided


def print_summary(title: str, counts: Counter) -> None:
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
        f"  wrong verdicts: ran called skipped {counts['ran->skipped']}, skipped called ran {counts['skipped->ran']}, "
        f"not collected called ran {counts['not collected, called ran']} (of {counts['not collected']} not collected)"
    )
    print(
        "  confusion (pytest->scanner): "
        + ", ".join(f"{key} {counts[key]}" for key in sorted(counts) if "->" in key)
    )
    print(f"  ran only until pytest-timeout stopped them (scored as ran): {counts['ran only by timeout']}")
    print(
        f"  left out: {counts['environment']} environment skips, {counts['placeholder']} failures of import-placeholder "
        f"classes, {counts['leaked']} failures on a meta device an earlier test leaked, {counts['offline']} failures to reach the Hub offline, {counts['noop']} no-op overrides, {counts['scanner not applicable']} pairs the scanner calls not applicable"
    )


def print_table(tests: list[str], per_test: dict[str, Counter]) -> None:
    print(
        "| test | scored | agree | pytest skipped | scanner skipped (right) | undecided | wrong | timeout | "
        "env | not collected (called ran) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for test in tests:
        counts = per_test[test]
        skipped = sum(counts[f"skipped->{p}"] for p in VERDICTS)
        predicted_skipped = counts["skipped->skipped"] + counts["ran->skipped"]
        undecided = counts["skipped->undecided"] + counts["ran->undecided"]
        wrong = counts["ran->skipped"] + counts["skipped->ran"] + counts["not collected, called ran"]
        print(
            f"| {test} | {counts['scored']} | {counts['agree']} | {skipped} | {predicted_skipped} "
            f"({counts['skipped->skipped']}) | {undecided} | {wrong} | {counts['ran only by timeout']} "
            f"| {sum(counts[kind] for kind in LEFT_OUT)} | {counts['not collected']} ({counts['not collected, called ran']}) |"
        )


def compare(results: dict, header: dict[str, str], rows: list[TruthRow]) -> int:
    tests = header["tests"].split()
    models = header["models"].split()
    truth = pytest_verdicts(rows, models, tests)
    scanned = scanner_verdicts(results, tests)
    per_test, disagreements = score(truth, scanned)
    total: Counter = Counter()
    for counts in per_test.values():
        total.update(counts)
    print(f"truth: {header.get('label', '')}")
    print(
        f"models: {len(models)} (left out: uncollected by pytest: {header.get('uncollected', '') or 'none'}; "
        f"run stopped before all their cases: {header.get('incomplete', '') or 'none'})"
    )
    if header.get("rerun"):
        print(f"rerun alone, replacing the group run's rows: {header['rerun']}")
    placeholders = placeholder_models(rows)
    if placeholders:
        print(
            "import-placeholder models: " + ", ".join(f"{m} ({p})" for m, p in sorted(placeholders.items()))
        )
    print(f"tests: {len(tests)}")
    print_summary("all tests", total)
    print()
    print_table(tests, per_test)
    print()
    for line in disagreements:
        print(f"  {line}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    scan = parser.add_mutually_exclusive_group(required=True)
    scan.add_argument("--repo", help="the transformers checkout pytest ran on (scanned now)")
    scan.add_argument("--scan_result", help="an all_tests_scan_result.json of that checkout")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--truth", help="compact truth written by benchmarks/pytest_truth.py")
    source.add_argument("--junit", nargs="+", help="junit XML file(s) written by pytest")
    parser.add_argument("--tests_file", help="with --junit: a file whose test_* words are the tests run")
    args = parser.parse_args(argv)
    try:
        if args.truth:
            header, rows = read_truth(Path(args.truth))
        else:
            if not args.tests_file:
                parser.error("--junit needs --tests_file")
            tests = tests_named_in(args.tests_file)
            rows, uncollected = rows_from_junit(args.junit, set(tests))
            header = {
                "tests": " ".join(tests),
                "models": " ".join(sorted({row.model for row in rows} - uncollected)),
                "uncollected": " ".join(sorted(uncollected)),
            }
        results = _scan_results(args.repo, args.scan_result)
    except (TruthInputError, CheckoutError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return compare(results, header, rows)


def _scan_results(repo: str | None, scan_result: str | None) -> dict:
    if repo is not None:
        # No cache: its keys follow the parsed files, not the evaluator's code, which is what is measured.
        return scan_repository(repo, use_cache=False).to_json()
    try:
        return json.loads(Path(scan_result).read_text())
    except (OSError, ValueError) as error:
        raise TruthInputError(f"{scan_result}: not a readable scan result ({error})") from None


if __name__ == "__main__":
    sys.exit(main())
