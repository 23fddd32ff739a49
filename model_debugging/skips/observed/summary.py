"""What ``scan --observed`` / ``--stale_skips`` print and write beside the scan result."""

from __future__ import annotations

from model_debugging.skips.observed.combined import ObservedJoin
from model_debugging.skips.observed.join import ENVIRONMENT, JoinedPair
from model_debugging.skips.observed.records import RunOutcome
from model_debugging.skips.observed.stale import StaleSkip

OBSERVED_FILE = "all_tests_observed.json"
STALE_FILE = "stale_skips.json"
RERUN_ARGS_FILE = "stale_skips_rerun.args"
RERUN_SELECT_FILE = "stale_skips_rerun.select"
RERUN_RECORD = "stale_skips_rerun.json"
SHOWN = 10


def observed_lines(join: ObservedJoin) -> list[str]:
    """The reports read, the undecided pairs before and after, the disagreements and inert passes."""
    lines = ["", "== Combined status (static verdicts, runs, inert tests) =="]
    for tally in join.tallies:
        report = tally.report
        note = " (skip decorators ignored: stale-skip run)" if report.ignores_skips else ""
        lines.append(
            f"{report.path} [{report.kind}, {report.machine}]: {tally.mapped} items mapped to pairs{note}"
        )
    before, after = join.undecided
    lines.append(f"Undecided pairs: {before} -> {after} ({before - after} decided by the runs)")
    sources = join.sources()
    lines.append(
        "Observed pairs: "
        + ", ".join(f"{sources.get(source, 0)} {source}" for source in ("observed", "both-agree", "disagree"))
    )
    disagreements = join.disagreements()
    by_kind = {
        kind: sum(pair.difference == kind for pair in disagreements) for kind in ("analyzer", "environment")
    }
    lines.append(
        f"Disagreements: {len(disagreements)} ({by_kind['analyzer']} analyzer, {by_kind['environment']} environment)"
    )
    ordered = sorted(disagreements, key=lambda pair: (pair.difference != "analyzer", pair.test, pair.model))
    for pair in ordered[:SHOWN]:
        lines.append(
            f" - [{pair.difference}] {pair.model} / {pair.test}: static {pair.static}"
            f"{f' ({pair.static_reason})' if pair.static_reason else ''}, observed {_observed_words(pair)}"
            f"{f' ({pair.observed_reason})' if pair.observed_reason else ''}"
        )
    if len(ordered) > SHOWN:
        lines.append(f" - ... {len(ordered) - SHOWN} more in {OBSERVED_FILE}")
    inert = [(model, name) for name, test in join.tests.items() for model in test.models["inert"]]
    lines.append(f"Inert pairs (ran without reaching an assertion): {len(inert)}")
    lines.extend(f" - {model} / {name}" for model, name in inert[:SHOWN])
    return lines


def _observed_words(pair: JoinedPair) -> str:
    if pair.observed != ENVIRONMENT:
        return pair.observed
    return "skipped" if any(item.outcome is RunOutcome.SKIPPED for item in pair.seen) else "failed"


def stale_lines(candidates: list[StaleSkip], rerun_command: str | None) -> list[str]:
    """How many skips may be stale, which of them now pass, and how to rerun the others."""
    pairs = sum(len(candidate.pairs) for candidate in candidates)
    lines = [
        "",
        f"== Stale-skip candidates: {len(candidates)} skips ({pairs} pairs) whose reason names no machine ==",
    ]
    passing = [candidate for candidate in candidates if candidate.now_passes]
    if any(candidate.rerun for candidate in candidates):
        lines.append(f"Pass with the skip ignored: {len(passing)}")
        lines.extend(
            f" - {candidate.file}:{candidate.line}: {candidate.reason}" for candidate in passing[:SHOWN]
        )
    aged = sorted((candidate for candidate in candidates if candidate.age), key=lambda c: -c.age.days)
    for candidate in aged[:SHOWN]:
        lines.append(
            f" - {candidate.age.days} days ({candidate.age.date}): {candidate.file}:{candidate.line}: {candidate.reason}"
        )
    if rerun_command is not None:
        lines.append(
            "Rerun the rerunnable ones with their skip decorators ignored (pytest >= 8.2, from the checkout):"
        )
        lines.append(f"  {rerun_command}")
        lines.append(f"then scan again with --observed {RERUN_RECORD} --stale_skips")
    return lines
