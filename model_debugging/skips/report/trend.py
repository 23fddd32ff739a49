"""What changed between two analyzer results, as data (DataFrames); `trend_report` lays it out.

Undecided is a state of its own: a (test, model) pair undecided on either side is never "newly
skipped" nor "no longer skipped"; it is listed as "now decided" or "now undecided" instead. A share
is taken over the decided models only and comes with the undecided count; a test no model is
decided for has no share (NaN). Inert is a state of its own too, in results that hold the combined
status (see :mod:`~model_debugging.skips.report.scan_results`): the test runs for the model but
reaches no assertion. It counts as run in the shares; a pair that becomes inert is listed as
"newly inert", one that checks something again as "no longer inert". Tests that apply to no model (an integration class of a common
file) stay in the data but out of the test tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from model_debugging.skips.results.environment_needs import needs_accelerator, needs_text, shared_requirements

# differences below this are floating-point noise
_TOLERANCE = 1e-9
RAN, INERT, SKIPPED, UNDECIDED, NOT_APPLICABLE = "ran", "inert", "skipped", "undecided", "not applicable"
_RUNNING = (RAN, INERT)
# a model the previous result has, but not in any list of this test (upstream's results list only
# the models that ran or skipped it)
_NOT_LISTED = "not listed"
NEW_MODEL = "new model"  # a model the previous result does not have
_STATE_COLUMNS = {
    "models_ran": RAN,
    "models_inert": INERT,
    "models_skipped": SKIPPED,
    "models_undecided": UNDECIDED,
    "models_not_applicable": NOT_APPLICABLE,
}
TEST_COLUMNS = ["test", "origin", "skipped", "undecided", "inert", "skipped_proportion", "needs"]


@dataclass(frozen=True)
class SkipTrend:
    """The changes from a previous scan to the current one; every table is a DataFrame.

    - ``proportion_changes``: test, origin, previous, current, change, undecided before, undecided now
      (a share is NaN when no model was decided; largest move first);
    - ``newly_skipped``: test, model, before (ran, inert, not applicable, "new model" when the model
      did not exist before, or "not listed" when the previous result does not list the model for the
      test), reason;
    - ``no_longer_skipped``: test, model, previous reason, now ("runs", "not applicable", "model removed");
    - ``now_decided``: test, model, now (ran or skipped), reason, undecided before because;
    - ``now_undecided``: test, model, before (ran, inert or skipped), because;
    - ``newly_inert``: test, model, before (ran, skipped, undecided, not applicable, or "new model");
    - ``no_longer_inert``: test, model, now (ran, skipped, undecided, not applicable, "model removed");
    - ``new_tests`` / ``removed_tests`` / ``most_skipped`` / ``most_skipped_on_accelerators``: test,
      origin, skipped (count/decided), undecided, inert (for a result with the combined status),
      skipped_proportion (NaN without a decided model), needs (the environment every model running
      it needs), for the tests that apply to a model; ``most_skipped`` holds the tests that run on
      any machine, ``most_skipped_on_accelerators`` those that need a GPU or another accelerator.
    ``previous_tests`` is ``None`` when there was no previous result.
    """

    proportion_changes: pd.DataFrame
    newly_skipped: pd.DataFrame
    no_longer_skipped: pd.DataFrame
    now_decided: pd.DataFrame
    now_undecided: pd.DataFrame
    newly_inert: pd.DataFrame
    no_longer_inert: pd.DataFrame
    new_tests: pd.DataFrame
    removed_tests: pd.DataFrame
    most_skipped: pd.DataFrame
    most_skipped_on_accelerators: pd.DataFrame
    previous_tests: int | None
    current_tests: int
    current_models: int


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def _names(results: pd.DataFrame, test: str, column: str) -> list[str]:
    value = results.at[test, column] if column in results.columns else None
    return value if isinstance(value, list) else []


def model_states(results: pd.DataFrame, test: str) -> dict[str, str]:
    """``{model: ran | inert | skipped | undecided | not applicable}`` for one test of a result."""
    return {
        model: state for column, state in _STATE_COLUMNS.items() for model in _names(results, test, column)
    }


def undecided_reasons(results: pd.DataFrame, test: str) -> dict[str, str]:
    """``{model: why}`` from the ``"<model>: undecided: <why>"`` lines of ``conditions``."""
    found = {}
    for line in _names(results, test, "conditions"):
        model, marker, why = line.partition(": undecided: ")
        if marker:
            found[model] = why
    return found


def all_models(results: pd.DataFrame) -> set[str]:
    """Every model a result mentions, whatever its verdict."""
    models: set[str] = set()
    for column in _STATE_COLUMNS:
        if column in results:
            for names in results[column].dropna():
                models.update(names)
    return models


def counts(results: pd.DataFrame, test: str) -> tuple[int, int, int]:
    """``(skipped, decided, undecided)`` models of one test (an inert model ran it: it is decided)."""
    skipped = len(_names(results, test, "models_skipped"))
    ran = len(_names(results, test, "models_ran")) + len(_names(results, test, "models_inert"))
    return skipped, skipped + ran, len(_names(results, test, "models_undecided"))


def share(results: pd.DataFrame, test: str) -> float:
    """Skipped over decided models, exact (not the result's 4-digit ``skipped_proportion``: rounding
    twice prints 19.1% for 4/21); NaN when no model is decided."""
    skipped, decided, _ = counts(results, test)
    return skipped / decided if decided else float("nan")


def applies_to_a_model(results: pd.DataFrame, test: str) -> bool:
    """Some model runs, skips or may run the test (an integration class of a common file applies to none)."""
    skipped, decided, undecided = counts(results, test)
    return decided + undecided > 0


def requirements(results: pd.DataFrame, test: str) -> tuple[str, ...]:
    """What every model running ``test`` needs of the machine (none for a result without conditions)."""
    conditions = results.at[test, "conditions"] if "conditions" in results.columns else None
    if not isinstance(conditions, list):
        return ()
    return shared_requirements(conditions, _names(results, test, "models_ran"))


def _test_table(results: pd.DataFrame, tests, on_accelerators: bool | None = None) -> pd.DataFrame:
    """The tests that apply to a model; with ``on_accelerators``, only those that do (or do not) need one."""
    rows = []
    for test in tests:
        if not applies_to_a_model(results, test):
            continue
        needs = requirements(results, test)
        if on_accelerators is not None and needs_accelerator(needs) != on_accelerators:
            continue
        skipped, decided, undecided = counts(results, test)
        rows.append(
            {
                "test": test,
                "origin": results.at[test, "origin"],
                "skipped": f"{skipped}/{decided}",
                "undecided": undecided,
                "inert": len(_names(results, test, "models_inert")),
                "skipped_proportion": share(results, test),
                "needs": needs_text(needs),
            }
        )
    frame = _frame(rows, TEST_COLUMNS)
    if "models_inert" not in results.columns:  # a result without the combined status knows no inert pair
        frame = frame.drop(columns="inert")
    return frame.sort_values(
        ["skipped_proportion", "test"], ascending=[False, True], na_position="last", ignore_index=True
    )


def _proportion_changes(previous: pd.DataFrame, current: pd.DataFrame, common, min_change: float):
    rows = []
    for test in common:
        before, after = share(previous, test), share(current, test)
        if pd.isna(before) and pd.isna(after):
            continue
        change = after - before
        if pd.isna(change) or abs(change) > min_change + _TOLERANCE:
            rows.append(
                {
                    "test": test,
                    "origin": current.at[test, "origin"],
                    "previous": before,
                    "current": after,
                    "change": change,
                    "undecided before": counts(previous, test)[2],
                    "undecided now": counts(current, test)[2],
                }
            )
    columns = ["test", "origin", "previous", "current", "change", "undecided before", "undecided now"]
    frame = _frame(rows, columns)
    if not rows:
        return frame
    order = frame["change"].abs().sort_values(ascending=False, kind="stable", na_position="last").index
    return frame.loc[order].reset_index(drop=True)


@dataclass
class _ModelChanges:
    newly: list[dict]
    stopped: list[dict]
    decided: list[dict]
    undecided: list[dict]
    inert: list[dict]
    checking: list[dict]


def _model_changes(previous: pd.DataFrame, current: pd.DataFrame, common) -> _ModelChanges:
    models_before, models_now = all_models(previous), all_models(current)
    found = _ModelChanges([], [], [], [], [], [])
    for test in common:
        before, now = model_states(previous, test), model_states(current, test)
        reasons_before, reasons_now = previous.at[test, "skip_reasons"], current.at[test, "skip_reasons"]
        why_before, why_now = undecided_reasons(previous, test), undecided_reasons(current, test)
        for model in sorted(set(before) | set(now)):
            was, is_ = before.get(model), now.get(model)
            if was == is_:
                continue
            if is_ == INERT and was != UNDECIDED:
                earlier = was or ("not applicable" if model in models_before else NEW_MODEL)
                found.inert.append({"test": test, "model": model, "before": earlier})
            elif was == INERT and is_ != UNDECIDED:
                now = is_ or ("not applicable" if model in models_now else "model removed")
                found.checking.append({"test": test, "model": model, "now": now})
            if was == UNDECIDED and is_ in (RAN, INERT, SKIPPED):
                reason = reasons_now.get(model, "") if is_ == SKIPPED else ""
                found.decided.append(
                    {
                        "test": test,
                        "model": model,
                        "now": is_,
                        "reason": reason,
                        "undecided before because": why_before.get(model, ""),
                    }
                )
            elif is_ == UNDECIDED and was in (RAN, INERT, SKIPPED):
                found.undecided.append(
                    {"test": test, "model": model, "before": was, "because": why_now.get(model, "")}
                )
            elif is_ == SKIPPED and was != UNDECIDED:
                earlier = was or (_NOT_LISTED if model in models_before else NEW_MODEL)
                found.newly.append(
                    {"test": test, "model": model, "before": earlier, "reason": reasons_now.get(model, "")}
                )
            elif was == SKIPPED and is_ != UNDECIDED:
                if is_ in _RUNNING:
                    where = "runs" if is_ == RAN else "runs, reaching no assertion (inert)"
                elif model in models_now:
                    where = "not applicable"
                else:
                    where = "model removed"
                found.stopped.append(
                    {
                        "test": test,
                        "model": model,
                        "previous reason": reasons_before.get(model, ""),
                        "now": where,
                    }
                )
    # skips by models that already existed are the surprising ones: list them before new models'
    found.newly.sort(key=lambda row: row["before"] == NEW_MODEL)
    return found


def compute_trend(
    previous: pd.DataFrame | None, current: pd.DataFrame, *, min_proportion_change: float = 0.0
) -> SkipTrend:
    """Compare two frames from :func:`~model_debugging.reporting.load_scan_results`.

    Args:
        previous (`pandas.DataFrame` or `None`): the earlier result; `None` gives only the headline.
        current (`pandas.DataFrame`): the newer result.
        min_proportion_change (`float`, *optional*, defaults to 0): a test is listed as changed when
            its skipped proportion moved by more than this (or gained or lost its decided models).
    """
    # without a previous result, compare the current one with itself: every change table is empty
    baseline = current if previous is None else previous
    common = sorted(set(baseline.index) & set(current.index))
    changes = _model_changes(baseline, current, common)
    return SkipTrend(
        proportion_changes=_proportion_changes(baseline, current, common, min_proportion_change),
        newly_skipped=_frame(changes.newly, ["test", "model", "before", "reason"]),
        no_longer_skipped=_frame(changes.stopped, ["test", "model", "previous reason", "now"]),
        now_decided=_frame(changes.decided, ["test", "model", "now", "reason", "undecided before because"]),
        now_undecided=_frame(changes.undecided, ["test", "model", "before", "because"]),
        newly_inert=_frame(changes.inert, ["test", "model", "before"]),
        no_longer_inert=_frame(changes.checking, ["test", "model", "now"]),
        new_tests=_test_table(current, sorted(set(current.index) - set(baseline.index))),
        removed_tests=_test_table(baseline, sorted(set(baseline.index) - set(current.index))),
        most_skipped=_test_table(current, current.index, on_accelerators=False),
        most_skipped_on_accelerators=_test_table(current, current.index, on_accelerators=True),
        previous_tests=None if previous is None else len(previous),
        current_tests=len(current),
        current_models=len(all_models(current)),
    )
