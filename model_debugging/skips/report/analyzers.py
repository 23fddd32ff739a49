"""Which analyzer made each side of a trend, and which changes the tree made when they differ.

A new analyzer moves verdicts on an unchanged tree (a rule fixed, a library fact read better). A
trend between results of two analyzers would report those as the library's new skips, so:

- same analyzer on both sides: every change is the tree's;
- different analyzers (or one side records none: "unknown analyzer") on the same commit: every
  change is the analyzer's;
- different analyzers with a *rescan* (the previous result's commit scanned again by the current
  analyzer): the tree's changes are rescan -> current (like with like), the analyzer's are
  previous -> rescan, listed apart;
- different analyzers without a rescan: the changes mix both; the report says so on its first line
  and titles them "tree or analyzer".
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from model_debugging.skips.report.trend import SkipTrend, compute_trend
from model_debugging.skips.results.provenance import Provenance

UNKNOWN = (
    "unknown analyzer (the result does not record it: written before results did, or by another scanner)"
)


@dataclass(frozen=True)
class AnalyzerComparison:
    """What the report says of the two sides' analyzers.

    ``lines``: the summary's first lines; ``mixed``: the tree's and the analyzer's changes cannot be
    told apart (the change sections say "tree or analyzer"); ``analyzer_trend``: the changes the
    analyzer alone made on one commit, listed apart (None when there are none to list)."""

    lines: tuple[str, ...]
    mixed: bool = False
    analyzer_trend: SkipTrend | None = None


def _shown(provenance: Provenance | None) -> str:
    return UNKNOWN if provenance is None else provenance.analyzer


def _of(provenance: Provenance | None) -> str:
    """``commit 1a2b3c4d5e6f``, or ``an unknown commit``."""
    return (
        "an unknown commit"
        if provenance is None or provenance.commit is None
        else f"commit {provenance.commit[:12]}"
    )


def same_analyzer(first: Provenance | None, second: Provenance | None) -> bool:
    return first is not None and second is not None and first.same_analyzer(second)


def commit_to_rescan(previous: Provenance | None, current: Provenance | None) -> tuple[str | None, str]:
    """The previous result's commit, when scanning it again with the current analyzer is what separates
    the tree's changes from the analyzer's (None otherwise), and a sentence saying why."""
    if same_analyzer(previous, current):
        return None, "both results come from the same analyzer: no rescan needed"
    if previous is None or previous.commit is None:
        return None, "the previous result records no commit: it cannot be scanned again"
    if current is not None and current.commit == previous.commit:
        return None, "both results read the same commit: every change is the analyzer's, no rescan needed"
    return (
        previous.commit,
        f"the analyzer changed since the previous result: scan its commit {previous.commit} again",
    )


def rescan_problem(
    previous: Provenance | None, current: Provenance | None, rescanned: Provenance | None
) -> str | None:
    """Why a rescan is not the previous result's commit scanned by the current analyzer, or None."""
    if rescanned is None:
        return "records no provenance: scan the previous result's commit with this version of model-debugging"
    if not same_analyzer(rescanned, current):
        return f"was made by {_shown(rescanned)}, not by the current scan's analyzer ({_shown(current)})"
    if previous is None or previous.commit is None:
        return "cannot be checked: the --previous result records no commit"
    if rescanned.commit != previous.commit:
        return f"read {_of(rescanned)}, not the --previous result's {_of(previous)}"
    return None


def compare_analyzers(
    previous: pd.DataFrame,
    current: pd.DataFrame,
    rescanned: pd.DataFrame | None,
    *,
    min_proportion_change: float,
) -> tuple[SkipTrend, AnalyzerComparison]:
    """The tree's trend and what to say of the analyzers, from results loaded by
    :func:`~model_debugging.skips.report.scan_results.load_scan_results` (``rescanned`` checked by
    :func:`rescan_problem`)."""
    before, now = previous.attrs.get("provenance"), current.attrs.get("provenance")

    def trend(old: pd.DataFrame, new: pd.DataFrame) -> SkipTrend:
        return compute_trend(old, new, min_proportion_change=min_proportion_change)

    commits = f"previous scan of {_of(before)}, current scan of {_of(now)}"
    if same_analyzer(before, now):
        line = (
            f"Both scans by the same analyzer ({_shown(now)}; {commits}): every change below is the tree's."
        )
        return trend(previous, current), AnalyzerComparison((line,))
    if before is None and now is None:  # the unknown analyzer's explanation once, not once per side
        changed = (
            "⚠️ Not known whether one analyzer made both scans: neither result records the analyzer that "
            "made it (written before results did, or by another scanner)."
        )
    else:
        changed = (
            "⚠️ The analyzer changed between the two scans"
            if before is not None and now is not None
            else "⚠️ Not known whether one analyzer made both scans"
        ) + f": previous {_shown(before)}; current {_shown(now)}."
    if rescanned is not None:
        lines = (
            changed,
            f"The changes below are the tree's: the previous scan's {_of(before)} scanned again by the "
            f"current analyzer, against {_of(now)}. What the analyzer change alone moved on "
            f'{_of(before)} is listed apart, under "Analyzer change".',
        )
        return trend(rescanned, current), AnalyzerComparison(lines, analyzer_trend=trend(previous, rescanned))
    if before is not None and now is not None and before.commit is not None and before.commit == now.commit:
        lines = (
            changed,
            f"Both scans read {_of(now)}: the tree did not change; every change is the "
            'analyzer\'s, listed under "Analyzer change".',
        )
        return trend(current, current), AnalyzerComparison(lines, analyzer_trend=trend(previous, current))
    how = (
        f"To separate them, scan the previous scan's {_of(before)} with the current analyzer and pass "
        "the result as --previous_rescanned."
        if before is not None and before.commit is not None
        else "The previous result records no commit to scan again, so they cannot be separated."
    )
    lines = (
        changed,
        f"The changes below ({commits}) mix the tree's with the analyzer's and this report cannot tell "
        f"them apart: none of them is known to be the tree's. {how}",
    )
    return trend(previous, current), AnalyzerComparison(lines, mixed=True)
