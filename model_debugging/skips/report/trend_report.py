"""Lay out a :class:`SkipTrend` as a :class:`Report` (titled tables with the configured row counts)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from model_debugging.reporting.report import Report, Section
from model_debugging.skips.records.test_files import ParseError
from model_debugging.skips.report.analyzers import AnalyzerComparison
from model_debugging.skips.report.broken_files import broken_file_lines
from model_debugging.skips.report.scan_results import CombinedNote
from model_debugging.skips.report.settings import ReportSettings
from model_debugging.skips.report.trend import NEW_MODEL, SkipTrend


def share_text(value: float, spec: str = ".1%") -> str:
    """A share as text; "n/a" when no model is decided (NaN)."""
    return "n/a" if pd.isna(value) else format(value, spec)


def change_text(value: float) -> str:
    """A change of share as text, never "+0.0%" for one that moved: a share that moved by less than
    0.05 points (one more model running a test 1 of 400 skip) gets two significant digits."""
    text = share_text(value, "+.1%")
    if text in ("+0.0%", "-0.0%") and value != 0:
        return f"{value * 100:+.2g}%"
    return text


def _formatted(frame: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """Copy ``frame`` with the share ``columns`` formatted (``{column: format}``)."""
    shown = frame.copy()
    for column, spec in columns.items():
        shown[column] = shown[column].map(lambda value, spec=spec: share_text(value, spec))
    return shown


def _test_rows(frame: pd.DataFrame) -> pd.DataFrame:
    shown = _formatted(frame, {"skipped_proportion": ".1%"}).rename(columns={"skipped_proportion": "share"})
    return shown.rename(columns={"skipped": "skipped/decided"})


def combined_text(side: str, note: CombinedNote | None) -> str:
    """What a result's statuses come from, for the summary of a report that compares results."""
    if note is None:
        return f"{side}: the analyzer's verdicts (no test runs joined)."
    return (
        f"{side}: the combined status of {note.tests} tests (the analyzer's verdicts joined with test "
        f"runs and inert findings): {note.decided_by_runs} pairs decided by the runs, "
        f"{note.disagreements} disagreements, {note.inert} inert pairs (listed apart from ran)."
    )


def _broken_files(
    previous: Sequence[ParseError] | None, current: Sequence[ParseError] | None, has_previous: bool
) -> list[str]:
    if not current:
        return []
    if not has_previous or previous is None:
        return broken_file_lines(current, new=False)
    before = {error.path for error in previous}
    new = [error for error in current if error.path not in before]
    lines = broken_file_lines(new, new=True)
    if len(new) < len(current):
        lines.append(
            f"{len(current) - len(new)} other scanned file(s) could not be collected in either scan."
        )
    return lines


def build_trend_report(
    trend: SkipTrend,
    settings: ReportSettings,
    combined: tuple[CombinedNote | None, CombinedNote | None] = (None, None),
    errors: tuple[Sequence[ParseError] | None, Sequence[ParseError] | None] = (None, None),
    analyzers: AnalyzerComparison | None = None,
) -> Report:
    """The trend report: summary, the changes, then the headline table of the most skipped tests.

    ``combined``: what the previous and current results' statuses come from (``frame.attrs["combined"]``
    of each); the summary says it when either holds the combined status. ``errors``: the files each
    scan could not collect (None when its errors file is missing); the summary names those of the
    current scan, first the ones the previous scan could collect, as they explain removed tests.
    ``analyzers``: which analyzer made each side (its lines come first) and the changes the analyzer
    alone made, listed apart (see :mod:`~model_debugging.skips.report.analyzers`)."""
    applying = len(trend.most_skipped) + len(trend.most_skipped_on_accelerators)
    summary = [*(analyzers.lines if analyzers is not None else ())]
    summary += [
        f"{trend.current_tests} common tests ({applying} apply to some model), "
        f"{trend.current_models} models in the current scan. Shares are over the models a test is "
        "decided for (ran, inert or skipped); undecided models are counted apart."
    ]
    summary += _broken_files(*errors, has_previous=trend.previous_tests is not None)
    previous_note, current_note = combined
    if current_note is not None or previous_note is not None:
        summary.append(combined_text("Current scan", current_note))
        if trend.previous_tests is not None:
            summary.append(combined_text("Previous scan", previous_note))
        if trend.previous_tests is not None and (previous_note is None) != (current_note is None):
            summary.append(
                "⚠️ Only one side joins test runs: a change between them may come from the runs, not the code."
            )
    headline = [
        Section("Most skipped tests", _test_rows(trend.most_skipped), settings.headline_rows),
        Section(
            "Most skipped tests that need an accelerator",
            _test_rows(trend.most_skipped_on_accelerators),
            settings.headline_rows,
        ),
    ]
    if trend.previous_tests is None:
        summary.append("No previous result to compare with: showing the current scan only.")
        return Report("Skipped tests report", summary, headline)
    inert = current_note is not None or previous_note is not None
    empty = " (it holds no test: a wrong file? every test reads as new)" if not trend.previous_tests else ""
    summary.append(f"Previous scan: {trend.previous_tests} common tests{empty}. {_counts(trend)}")
    if inert:
        summary.append(
            f"Newly inert: {len(trend.newly_inert)}; no longer inert: {len(trend.no_longer_inert)}."
        )
    mixed = analyzers is not None and analyzers.mixed
    sections = _change_sections(trend, settings, inert, suffix=" (tree or analyzer)" if mixed else "")
    moved = analyzers.analyzer_trend if analyzers is not None else None
    if moved is not None:
        summary.append(f"Moved by the analyzer change alone: {_counts(moved)}")
        sections += _change_sections(moved, settings, inert, prefix="Analyzer change: ")
    return Report("Skipped tests trend", summary, [*sections, *headline])


def _counts(trend: SkipTrend) -> str:
    """How many pairs and tests each change section lists, as one sentence."""
    by_new_models = int((trend.newly_skipped["before"] == NEW_MODEL).sum())
    by_removed_models = int((trend.no_longer_skipped["now"] == "model removed").sum())
    return (
        f"New skips: {len(trend.newly_skipped)} ({by_new_models} by new models); skips gone: "
        f"{len(trend.no_longer_skipped)} ({by_removed_models} with removed models); "
        f"now decided: {len(trend.now_decided)}; now undecided: {len(trend.now_undecided)}; "
        f"new tests: {len(trend.new_tests)}; removed tests: {len(trend.removed_tests)}."
    )


def _change_sections(
    trend: SkipTrend, settings: ReportSettings, inert: bool, *, prefix: str = "", suffix: str = ""
):
    """The sections of what changed, titled ``prefix + title + suffix``."""
    rows = settings.model_change_rows
    changes = _formatted(trend.proportion_changes, {"previous": ".1%", "current": ".1%"})
    changes["change"] = changes["change"].map(change_text)
    found = [
        Section("Skipped proportion changed", changes, settings.changed_rows, "No test changed."),
        Section("Newly skipped", trend.newly_skipped, rows, "No new skips."),
        Section("No longer skipped", trend.no_longer_skipped, rows, "No skip was removed."),
        Section("Now decided (undecided before)", trend.now_decided, rows, "None."),
        Section("Now undecided (decided before)", trend.now_undecided, rows, "None."),
    ]
    if inert:
        found += [
            Section("Newly inert (runs, reaching no assertion)", trend.newly_inert, rows, "None."),
            Section("No longer inert", trend.no_longer_inert, rows, "None."),
        ]
    found += [
        Section("New common tests", _test_rows(trend.new_tests), settings.test_change_rows),
        Section("Removed common tests", _test_rows(trend.removed_tests), settings.test_change_rows),
    ]
    return [dataclasses.replace(section, title=f"{prefix}{section.title}{suffix}") for section in found]
