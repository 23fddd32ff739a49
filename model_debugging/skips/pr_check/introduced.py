"""The (model, test) skips a change introduces, and which of them deserve a second look."""

from __future__ import annotations

import pandas as pd

from model_debugging.skips.trend import all_models

INTRODUCED_COLUMNS = ["test", "model", "reason", "share before", "share after", "note", "flagged"]


def find_introduced_skips(
    base: pd.DataFrame, head: pd.DataFrame, *, min_skipped_share: float
) -> pd.DataFrame:
    """Every (model, test) that head skips and base did not, one row each.

    Args:
        base (`pandas.DataFrame`): the scan of the base revision (:func:`load_scan_results`).
        head (`pandas.DataFrame`): the scan of the working tree.
        min_skipped_share (`float`): a row is ``flagged`` when fewer than this share of models skipped the
            test before the change (for a test the change adds: after it).

    Returns:
        `pandas.DataFrame`: columns ``test, model, reason, share before, share after, note, flagged``;
        flagged rows first, then by rising share. ``share before`` is NaN for a test the change adds.
    """
    base_models = all_models(base)
    rows = []
    for test in head.index:
        known = test in base.index
        skipped_before = set(base.at[test, "models_skipped"]) if known else set()
        share_after = float(head.at[test, "skipped_proportion"])
        share_before = float(base.at[test, "skipped_proportion"]) if known else float("nan")
        compared = share_before if known else share_after
        for model in sorted(set(head.at[test, "models_skipped"]) - skipped_before):
            notes = [] if known else ["new test"]
            if model not in base_models:
                notes.append("new model")
            rows.append(
                {
                    "test": test,
                    "model": model,
                    "reason": head.at[test, "skip_reasons"].get(model, ""),
                    "share before": share_before,
                    "share after": share_after,
                    "note": ", ".join(notes),
                    "flagged": compared < min_skipped_share,
                }
            )
    frame = pd.DataFrame(rows, columns=INTRODUCED_COLUMNS)
    return frame.sort_values(
        ["flagged", "share before", "test", "model"], ascending=[False, True, True, True], ignore_index=True
    )
