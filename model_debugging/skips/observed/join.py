"""Join what test runs did with the analyzer's verdicts: one combined status per (model, test).

A pair a run saw gets its observed verdict: ran when some item of the model ran the test (passed
or failed) on some machine (the analyzer's verdict is for a machine that has everything), skipped
when every item skipped it, inert when it ran and the items whose assertions were counted (by our
pytest plugin) passed without reaching one although their test has one. An item that skipped for
what the machine lacked, or failed for what the run lacked (offline, a missing package), tells
nothing of the model (see :mod:`~model_debugging.skips.observed.environment`). Then, with the
static verdict:

- no observation: the static verdict (source ``static``);
- undecided statically: the observed verdict (``observed``), unless the runs only skipped or
  failed it for what they lacked (it stays undecided, ``static``);
- the same verdict (inert refines ran; a no-op override that passes is the skip the analyzer means):
  ``both-agree``; a pair found inert statically (``skips/inert``) whose run reached an assertion is
  a disagreement;
- different verdicts: ``disagree``. A skip whose reason names the machine is an *environment*
  difference: the static verdict stands. Any other is an *analyzer* difference: the run's verdict
  stands.
- not applicable statically: stays so (a model's own test may share a common test's name).

Runs with skip decorators ignored (our plugin's ``--observed_ignore_skips``) are left out here:
they answer which skips are stale (:mod:`~model_debugging.skips.observed.stale`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from model_debugging.skips.observed.environment import failed_for_the_run, names_environment
from model_debugging.skips.observed.naming import Named, Namer
from model_debugging.skips.observed.records import Report, RunOutcome
from model_debugging.skips.records.test_files import SkipKind
from model_debugging.skips.results.scan_result import TestResult

STATUSES = ("ran", "inert", "skipped", "undecided", "not_applicable")
SOURCES = ("static", "observed", "both-agree", "disagree")
ENVIRONMENT, ANALYZER = "environment", "analyzer"


@dataclass(frozen=True)
class Seen:
    """One item (or folded line of items) of a report that ran or skipped a pair."""

    report: str
    machine: str
    outcome: RunOutcome
    test_class: str | None
    case: str | None
    reason: str
    count: int = 1
    assertions: int | None = None
    checks: bool | None = None

    @property
    def for_the_run(self) -> bool:
        """It skipped for what the machine lacked, or failed for what the run lacked (see
        :mod:`~model_debugging.skips.observed.environment`): it tells nothing of the model."""
        if self.outcome is RunOutcome.SKIPPED:
            return names_environment(self.reason)
        return self.outcome is not RunOutcome.PASSED and failed_for_the_run(self.reason)

    @property
    def inert(self) -> bool:
        """It passed without reaching an assertion, and its test holds one."""
        return self.outcome is RunOutcome.PASSED and self.assertions == 0 and self.checks is True

    def to_json(self) -> dict[str, object]:
        return {
            "report": self.report,
            "machine": self.machine,
            "outcome": self.outcome.value,
            "test_class": self.test_class,
            "case": self.case,
            "reason": self.reason,
            "count": self.count,
            "assertions": self.assertions,
        }


def observed_status(seen: Iterable[Seen]) -> str:
    """ran, inert, skipped, or environment (every item that did not run skipped or failed for what
    its run lacked: a machine that has everything may run it). Inert when the items that counted
    assertions passed without one and none reached one or failed (an item not counted tells neither
    way)."""
    seen = list(seen)
    telling = [item for item in seen if not item.for_the_run]
    ran = [item for item in telling if item.outcome.ran]
    if ran:
        counted = [item for item in ran if item.assertions is not None]
        failed = any(item.outcome is not RunOutcome.PASSED for item in ran)
        return "inert" if counted and not failed and all(item.inert for item in counted) else "ran"
    return ENVIRONMENT if len(telling) < len(seen) else "skipped"


@dataclass(frozen=True)
class JoinedPair:
    """One (model, test) a run saw: both verdicts, the combined status and where it comes from."""

    test: str
    model: str
    static: str
    static_reason: str
    seen: tuple[Seen, ...]
    status: str
    source: str
    difference: str | None = None  # for a disagreement: environment or analyzer

    @property
    def observed(self) -> str:
        return observed_status(self.seen)

    @property
    def observed_reason(self) -> str:
        """The skip reasons, and the failures that were the run's, of the items that did not run it."""
        reasons = dict.fromkeys(
            " ".join(item.reason.split())[:200]
            for item in self.seen
            if (not item.outcome.ran or item.for_the_run) and item.reason
        )
        return "; ".join(reasons)

    def to_json(self) -> dict[str, object]:
        return {
            "test": self.test,
            "model": self.model,
            "status": self.status,
            "source": self.source,
            "static": self.static,
            "static_reason": self.static_reason,
            "observed": self.observed,
            "observed_reason": self.observed_reason,
            "difference": self.difference,
            "seen": [item.to_json() for item in self.seen],
        }


def combine(static: str, static_reason: str, seen: tuple[Seen, ...]) -> tuple[str, str, str | None]:
    """(status, source, difference) of a pair with its static verdict and what runs saw of it."""
    if not seen:
        return static, "static", None
    observed = observed_status(seen)
    if static == "undecided":  # a run that lacked something decides nothing
        return ("undecided", "static", None) if observed == ENVIRONMENT else (observed, "observed", None)
    if static == "not_applicable":
        return static, "static", None
    if static in ("ran", "inert"):
        if observed == "skipped":
            return observed, "disagree", ANALYZER
        if observed == ENVIRONMENT:  # skipped for the machine: a difference; failed for the run: it ran
            skipped = any(item.outcome is RunOutcome.SKIPPED for item in seen)
            return (static, "disagree", ENVIRONMENT) if skipped else (static, "both-agree", None)
        if static == "inert" and any(item.assertions for item in seen if item.outcome.ran):
            return "ran", "disagree", ANALYZER  # a run reached an assertion the analyzer says it cannot
        return ("inert" if "inert" in (static, observed) else "ran"), "both-agree", None
    noop = static_reason.startswith(f"{SkipKind.NOOP_OVERRIDE.value}:")
    if observed == "skipped" or (noop and observed != ENVIRONMENT):
        return static, "both-agree", None
    if observed == ENVIRONMENT:
        return static, "static", None
    return observed, "disagree", ANALYZER


@dataclass
class ReportTally:
    """How the items of one report were named."""

    report: Report
    mapped: int = 0
    other: int = 0  # items of tests that are no pair of the scan
    unmapped: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        report = self.report
        return {
            "path": report.path,
            "kind": report.kind,
            "machine": report.machine,
            "commit": report.commit,
            "ignores_skips": report.ignores_skips,
            "counts_assertions": report.counts_assertions,
            "items": sum(item.count for item in report.items),
            "mapped": self.mapped,
            "other_tests": self.other,
            "unmapped": dict(sorted(self.unmapped.items())),
        }


def observe(
    reports: Iterable[Report], namer: Namer
) -> tuple[dict[tuple[str, str], list[Seen]], list[ReportTally]]:
    """(test, model) -> what the reports saw of it, and how each report's items were named."""
    seen: dict[tuple[str, str], list[Seen]] = defaultdict(list)
    tallies = []
    for report in reports:
        tally = ReportTally(report)
        report_model = namer.report_model(report)
        for item in report.items:
            named = namer.name(item, report_model)
            if named is None:
                tally.other += item.count
            elif isinstance(named, str):
                tally.unmapped[named] = tally.unmapped.get(named, 0) + item.count
            else:
                tally.mapped += item.count
                seen[named.test, named.model].append(_seen(report, item, named))
        tallies.append(tally)
    return seen, tallies


def _seen(report: Report, item, named: Named) -> Seen:
    return Seen(
        report.path,
        report.machine,
        item.outcome,
        named.test_class,
        named.case,
        item.reason,
        item.count,
        item.assertions if report.counts_assertions else None,
        item.checks,
    )


def static_verdicts(result: TestResult, inert: Collection[str] = ()) -> dict[str, tuple[str, str]]:
    """model -> (status, what the analyzer says of it: a skip's kind and reason, why it is
    undecided, the conditions it runs under); models found ``inert`` statically are inert."""
    notes: dict[str, list[str]] = defaultdict(list)
    for line in result.conditions:
        model, _, text = line.partition(": ")
        notes[model].append(text.removeprefix("undecided: "))
    verdicts = {
        model: ("inert" if model in inert else "ran", "; ".join(notes.get(model, [])))
        for model in result.models_ran
    }
    verdicts.update({skip.model: ("skipped", f"{skip.kind.value}: {skip.reason}") for skip in result.skips})
    verdicts.update(
        {model: ("undecided", "; ".join(notes.get(model, []))) for model in result.models_undecided}
    )
    verdicts.update({model: ("not_applicable", "") for model in result.models_not_applicable})
    return verdicts


def join_pairs(
    tests: Mapping[str, TestResult],
    seen: Mapping[tuple[str, str], list[Seen]],
    inert: Mapping[str, Collection[str]],
) -> dict[tuple[str, str], JoinedPair]:
    """Every pair some run saw, joined with its static verdict (pairs of unknown tests are left out)."""
    verdicts = {name: static_verdicts(result, inert.get(name, ())) for name, result in tests.items()}
    joined = {}
    for (test, model), items in sorted(seen.items()):
        static, reason = verdicts.get(test, {}).get(model, ("not_applicable", ""))
        status, source, difference = combine(static, reason, tuple(items))
        joined[test, model] = JoinedPair(
            test, model, static, reason, tuple(items), status, source, difference
        )
    return joined
