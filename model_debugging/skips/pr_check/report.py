"""Lay out the skips a change introduces as a :class:`Report` that says whether the check passes."""

from __future__ import annotations

import pandas as pd

from model_debugging.reporting.report import Report, Section
from model_debugging.skips.report_settings import PRCheckSettings


def build_pr_report(introduced: pd.DataFrame, settings: PRCheckSettings, base_ref: str) -> Report:
    """Lay out the introduced skips as a report whose summary says whether the check passes."""
    flagged = int(introduced["flagged"].sum())
    threshold = f"{settings.min_skipped_share:.0%}"
    if introduced.empty:
        summary = [f"No new skips compared with `{base_ref}`."]
    else:
        summary = [f"{len(introduced)} new (model, test) skips compared with `{base_ref}`."]
        if flagged:
            summary.append(
                f"⚠️ {flagged} of these skips hit a test that fewer than {threshold} of models skipped before. "
                "Such a test has rarely been skipped: maybe ponder whether the model can pass it instead."
            )
        else:
            summary.append(f"Each skips a test that at least {threshold} of models already skipped.")
    shown = introduced.copy()
    for column in ("share before", "share after"):
        shown[column] = shown[column].map(lambda value: "" if pd.isna(value) else f"{value:.1%}")
    shown["flagged"] = shown["flagged"].map(lambda value: "⚠️ rarely skipped" if value else "")
    sections = [Section("Skips introduced by this change", shown, settings.max_rows, "None.")]
    return Report("New skipped tests", summary, sections)
