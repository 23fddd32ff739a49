"""The (model, test) skips a change introduces, and which of them deserve a second look."""

from __future__ import annotations

import pandas as pd

from model_debugging.skips.trend import all_models

INTRODUCED_COLUMNS = ["test", "model", "reason", "share before", "share after", "note", "flagged"]


# how a model that ran the test before the change may not run it after it, besides a skip
_NOT_COLLECTED = "no longer collected (the class shadows, deletes or stops collecting the test)"
_UNDECIDED = "no longer decidable statically"


def _column(frame: pd.DataFrame, test: str, column: str) -> list[str]:
    value = frame.at[test, column] if column in frame.columns else None
    return value if isinstance(value, list) else []


def _reasons_out_of_ran(base: pd.DataFrame, head: pd.DataFrame, test: str) -> dict[str, str]:
    """Models that ran ``test`` in base and, still present, are not applicable or undecided in head."""
    ran_before = set(base.at[test, "models_ran"])
    found = {
        model: _NOT_COLLECTED for model in _column(head, test, "models_not_applicable") if model in ran_before
    }
    found.update(
        {model: _UNDECIDED for model in _column(head, test, "models_undecided") if model in ran_before}
    )
    return found


def find_introduced_skips(
    base: pd.DataFrame, head: pd.DataFrame, *, min_skipped_share: float
) -> pd.DataFrame:
    """Every (model, test) that base ran or did not have and head does not run, one row each.

    A model that ran the test before and is skipped, not applicable (the test is shadowed, deleted,
    or its class no longer collected) or undecided after the change counts: any way out of "ran" is
    a new skip.

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
        reasons = _reasons_out_of_ran(base, head, test) if known else {}
        reasons.update(
            {model: head.at[test, "skip_reasons"].get(model, "") for model in head.at[test, "models_skipped"]}
        )
        for model in sorted(set(reasons) - skipped_before):
            notes = [] if known else ["new test"]
            if model not in base_models:
                notes.append("new model")
            rows.append(
                {
                    "test": test,
                    "model": model,
                    "reason": reasons[model],
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
