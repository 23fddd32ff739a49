"""The skips a change removes: a (model, test class, test) that base skipped and head does not.

A pull request that un-skips a test is news for its reviewer as much as one that skips a test: the
test runs again for that model (or is left undecided, or no longer applies). Only tests head
still defines count, and only models whose test files head can still parse and import: the summary
names the common tests the change removes and the files it breaks.
"""

from __future__ import annotations

import pandas as pd

from model_debugging.skips.report.pr_check.introduced import Scans, class_state, pair_state, undecided_because

REMOVED_COLUMNS = ["test", "model", "test class", "where", "reason", "now"]
# what head does with a pair base skipped, as the ``now`` column says it
_NOW = {"ran": "runs", "inert": "runs, reaching no assertion (inert)", "new model": "model removed"}


def find_removed_skips(scans: Scans) -> pd.DataFrame:
    """Every skip of base that head no longer has, one row per (test, model, test class).

    ``where`` and ``reason`` are base's; ``now`` is what head does with the pair: ``runs``,
    ``undecided: <why>``, ``not applicable`` (no test class of the model collects the test any
    more), ``model removed``, or for a test class head no longer has, the model's state.

    Returns:
        `pandas.DataFrame`: columns :data:`REMOVED_COLUMNS`, by test, model and class.
    """
    rows = []
    for test, before in scans.base.tests.items():
        after = scans.head.tests.get(test)
        if after is None:
            continue  # a common test the change removes: the summary names it
        for (model, test_class, class_file), skip in before.class_skips().items():
            if model in scans.new_parse_error_of:
                continue  # pytest collects nothing of it any more: rows of its own, and the summary, say why
            now = class_state(after, model, test_class or "", class_file)
            if now == "new class":  # the model no longer has this class: what the model does
                now = pair_state(scans.head, test, model)
            if now == "skipped":
                continue
            if now == "undecided":
                now = f"undecided: {undecided_because(after, model)}"
            rows.append(
                {
                    "test": test,
                    "model": model,
                    "test class": test_class or "",
                    "where": f"{skip.file}:{skip.line}" if skip.file else "",
                    "reason": skip.reason,
                    "now": _NOW.get(now, now),
                }
            )
    frame = pd.DataFrame(rows, columns=REMOVED_COLUMNS)
    return frame.sort_values(["test", "model", "test class"], ignore_index=True)
