"""The scan joined with test runs: per test, every model's combined status; and what to warn about.

:func:`join_observed` is what ``scan_repository(..., observed=...)`` attaches to its result. Each
test's entry of ``all_tests_scan_result.json`` then gets a ``combined`` key with the combined
lists (``models_ran``, ``models_inert``, ``models_skipped``, ``models_undecided``,
``models_not_applicable``); the reports that compare results read them
(:mod:`model_debugging.skips.report.scan_results`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_debugging.skips.observed.join import STATUSES, JoinedPair, ReportTally, join_pairs, observe
from model_debugging.skips.observed.naming import COLLECTION_ERROR, Namer
from model_debugging.skips.observed.records import Report
from model_debugging.skips.results.scan_result import TestResult
from model_debugging.skips.source.git_reads import run_git


@dataclass(frozen=True)
class CombinedTest:
    """Every model of one test by combined status, and the models the runs decided or contradicted."""

    models: Mapping[str, tuple[str, ...]]  # status -> models (sorted), for every status of STATUSES
    decided_by_observation: tuple[str, ...]
    disagreements: tuple[str, ...]
    reasons_observed: Mapping[str, str]  # model -> skip reason, for skips the runs decided

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {f"models_{status}": list(self.models[status]) for status in STATUSES}
        entry["decided_by_observation"] = list(self.decided_by_observation)
        entry["disagreements"] = list(self.disagreements)
        entry["reasons_observed"] = dict(self.reasons_observed)
        return entry


@dataclass(frozen=True)
class ObservedJoin:
    """The join of a scan with the reports of test runs (see :mod:`~model_debugging.skips.observed.join`).

    ``pairs`` holds every pair a run saw; ``stale_runs`` the pairs runs with skip decorators ignored
    saw (they decide nothing here); ``tallies`` how each report's items were named;
    ``static_inert`` the pairs found inert from the sources (test -> models).
    """

    tests: Mapping[str, CombinedTest]
    pairs: Mapping[tuple[str, str], JoinedPair]
    stale_runs: Mapping[tuple[str, str], JoinedPair]
    tallies: tuple[ReportTally, ...]
    warnings: tuple[str, ...]
    static_inert: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def undecided(self) -> tuple[int, int]:
        """Undecided pairs before the runs and after."""
        after = sum(len(test.models["undecided"]) for test in self.tests.values())
        return after + sum(len(test.decided_by_observation) for test in self.tests.values()), after

    def sources(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for pair in self.pairs.values():
            counts[pair.source] = counts.get(pair.source, 0) + 1
        return counts

    def disagreements(self) -> list[JoinedPair]:
        return [pair for pair in self.pairs.values() if pair.source == "disagree"]

    def _source(self, test: str, model: str) -> str:
        pair = self.pairs.get((test, model))
        return pair.source if pair is not None else "static"

    def test_json(self, name: str) -> dict[str, Any] | None:
        test = self.tests.get(name)
        return test.to_json() if test is not None else None

    def to_json(self) -> dict[str, Any]:
        before, after = self.undecided
        return {
            "reports": [tally.to_json() for tally in self.tallies],
            "warnings": list(self.warnings),
            "undecided": {"before": before, "after": after},
            "sources": self.sources(),
            "disagreements": [pair.to_json() for pair in self.disagreements()],
            "inert": [
                {"test": name, "model": model, "source": self._source(name, model)}
                for name, test in self.tests.items()
                for model in test.models["inert"]
            ],
            "pairs": [pair.to_json() for pair in self.pairs.values()],
        }


def join_observed(
    tests: Mapping[str, TestResult],
    reports: Sequence[Report],
    namer: Namer,
    repo: Path,
    inert: Mapping[str, Sequence[str]],
) -> ObservedJoin:
    """Join the scan's ``tests`` (with the pairs found ``inert`` statically) with ``reports`` named
    by ``namer`` against the checkout ``repo``."""
    seen, tallies = observe([report for report in reports if not report.ignores_skips], namer)
    stale_seen, stale_tallies = observe([report for report in reports if report.ignores_skips], namer)
    pairs = join_pairs(tests, seen, inert)
    by_test: dict[str, list[JoinedPair]] = {}
    for pair in pairs.values():
        by_test.setdefault(pair.test, []).append(pair)
    combined = {
        name: _combined_test(result, by_test.get(name, []), inert.get(name, ()))
        for name, result in tests.items()
    }
    all_tallies = tuple(tallies + stale_tallies)
    return ObservedJoin(
        combined,
        pairs,
        join_pairs(tests, stale_seen, {}),
        all_tallies,
        tuple(_warnings(all_tallies, repo)),
        {name: tuple(models) for name, models in inert.items()},
    )


def _combined_test(result: TestResult, pairs: list[JoinedPair], inert: Sequence[str]) -> CombinedTest:
    status = {model: "inert" if model in inert else "ran" for model in result.models_ran}
    status.update({skip.model: "skipped" for skip in result.skips})
    status.update({model: "undecided" for model in result.models_undecided})
    status.update({model: "not_applicable" for model in result.models_not_applicable})
    for pair in pairs:
        if pair.model in status:
            status[pair.model] = pair.status
    models = {
        name: tuple(sorted(model for model, found in status.items() if found == name)) for name in STATUSES
    }
    decided = tuple(pair.model for pair in pairs if pair.source == "observed")
    disagreements = tuple(pair.model for pair in pairs if pair.source == "disagree")
    reasons = {
        pair.model: pair.observed_reason
        for pair in pairs
        if pair.status == "skipped" and pair.source in ("observed", "disagree")
    }
    return CombinedTest(models, decided, disagreements, reasons)


def _head(repo: Path) -> str | None:
    """The commit the checkout is at, when it is a git work tree and git answers."""
    try:
        found = run_git(repo, "rev-parse", "HEAD")
    except OSError:
        return None
    if found.returncode != 0:
        return None
    return found.stdout.strip() or None


def _warnings(tallies: Sequence[ReportTally], repo: Path) -> list[str]:
    """A report of another revision: the commit it names, and the counts of items that did not map;
    and the model test files a run could not collect."""
    warnings = []
    head = _head(repo) if any(tally.report.commit for tally in tallies) else None
    for tally in tallies:
        report = tally.report
        warnings.extend(report.warnings)
        if report.commit and head and not head.startswith(report.commit):
            warnings.append(f"{report.path}: made at commit {report.commit}, the checkout is at {head[:10]}")
        unmapped = {why: count for why, count in tally.unmapped.items() if why != COLLECTION_ERROR}
        if unmapped:
            lost = sum(unmapped.values())
            counts = ", ".join(f"{count} in {why}" for why, count in sorted(unmapped.items()))
            total = sum(tally.unmapped.values()) + tally.mapped + tally.other
            warnings.append(
                f"{report.path}: {lost} of {total} items did not map to this checkout ({counts}); "
                "a report of another revision?"
            )
        if COLLECTION_ERROR in tally.unmapped:
            warnings.append(
                f"{report.path}: {tally.unmapped[COLLECTION_ERROR]} model test files could not be collected "
                "in this run: their tests are not observed"
            )
    return warnings
