"""What changed between two analyzer results, as data (DataFrames); `trend_report` lays it out."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

# differences below this are rounding noise of the 4-digit proportions
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class SkipTrend:
    """The changes from a previous scan to the current one; every table is a DataFrame.

    - ``proportion_changes``: test, origin, previous, current, change (largest move first);
    - ``newly_skipped``: test, model, reason, note ("new model" when the model did not exist before);
    - ``no_longer_skipped``: test, model, previous reason, now ("runs", "not applicable", "model removed");
    - ``new_tests`` / ``removed_tests``: test, origin, skipped (count/total), skipped_proportion;
    - ``most_skipped``: the current tests, most skipped first.
    ``previous_tests`` is ``None`` when there was no previous result.
    """

    proportion_changes: pd.DataFrame
    newly_skipped: pd.DataFrame
    no_longer_skipped: pd.DataFrame
    new_tests: pd.DataFrame
    removed_tests: pd.DataFrame
    most_skipped: pd.DataFrame
    previous_tests: int | None
    current_tests: int
    current_models: int


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def all_models(results: pd.DataFrame) -> set[str]:
    """Every model a result mentions: ran, skipped or (when the analyzer says so) not applicable."""
    models: set[str] = set()
    for column in ("models_ran", "models_skipped", "models_not_applicable"):
        if column in results:
            for names in results[column].dropna():
                models.update(names)
    return models


def _test_table(results: pd.DataFrame, tests) -> pd.DataFrame:
    rows = [
        {
            "test": test,
            "origin": results.at[test, "origin"],
            "skipped": f"{results.at[test, 'skipped_count']}/"
            f"{results.at[test, 'skipped_count'] + results.at[test, 'ran_count']}",
            "skipped_proportion": results.at[test, "skipped_proportion"],
        }
        for test in tests
    ]
    frame = _frame(rows, ["test", "origin", "skipped", "skipped_proportion"])
    return frame.sort_values(["skipped_proportion", "test"], ascending=[False, True], ignore_index=True)


def _proportion_changes(previous: pd.DataFrame, current: pd.DataFrame, common, min_change: float):
    rows = []
    for test in common:
        before, after = previous.at[test, "skipped_proportion"], current.at[test, "skipped_proportion"]
        if abs(after - before) > min_change + _TOLERANCE:
            rows.append(
                {
                    "test": test,
                    "origin": current.at[test, "origin"],
                    "previous": before,
                    "current": after,
                    "change": round(after - before, 4),
                }
            )
    frame = _frame(rows, ["test", "origin", "previous", "current", "change"])
    order = frame["change"].abs().sort_values(ascending=False, kind="stable").index
    return frame.loc[order].reset_index(drop=True) if rows else frame


def _model_changes(previous: pd.DataFrame, current: pd.DataFrame, common):
    models_before, models_now = all_models(previous), all_models(current)
    newly, stopped = [], []
    for test in common:
        skipped_before = set(previous.at[test, "models_skipped"])
        skipped_now = set(current.at[test, "models_skipped"])
        reasons_before, reasons_now = previous.at[test, "skip_reasons"], current.at[test, "skip_reasons"]
        for model in sorted(skipped_now - skipped_before):
            note = "" if model in models_before else "new model"
            newly.append({"test": test, "model": model, "reason": reasons_now.get(model, ""), "note": note})
        ran_now = set(current.at[test, "models_ran"])
        for model in sorted(skipped_before - skipped_now):
            if model in ran_now:
                now = "runs"
            elif model in models_now:
                now = "not applicable"
            else:
                now = "model removed"
            stopped.append(
                {"test": test, "model": model, "previous reason": reasons_before.get(model, ""), "now": now}
            )
    # skips by models that already existed are the surprising ones: list them before new models'
    newly.sort(key=lambda row: row["note"] == "new model")
    return (
        _frame(newly, ["test", "model", "reason", "note"]),
        _frame(stopped, ["test", "model", "previous reason", "now"]),
    )


def compute_trend(
    previous: pd.DataFrame | None, current: pd.DataFrame, *, min_proportion_change: float = 0.0
) -> SkipTrend:
    """Compare two frames from :func:`~model_debugging.reporting.load_scan_results`.

    Args:
        previous (`pandas.DataFrame` or `None`): the earlier result; `None` gives only the headline.
        current (`pandas.DataFrame`): the newer result.
        min_proportion_change (`float`, *optional*, defaults to 0): a test is listed as changed when
            its skipped proportion moved by more than this.
    """
    # without a previous result, compare the current one with itself: every change table is empty
    baseline = current if previous is None else previous
    common = sorted(set(baseline.index) & set(current.index))
    newly_skipped, no_longer_skipped = _model_changes(baseline, current, common)
    return SkipTrend(
        proportion_changes=_proportion_changes(baseline, current, common, min_proportion_change),
        newly_skipped=newly_skipped,
        no_longer_skipped=no_longer_skipped,
        new_tests=_test_table(current, sorted(set(current.index) - set(baseline.index))),
        removed_tests=_test_table(baseline, sorted(set(baseline.index) - set(current.index))),
        most_skipped=_test_table(current, current.index),
        previous_tests=None if previous is None else len(previous),
        current_tests=len(current),
        current_models=len(all_models(current)),
    )
