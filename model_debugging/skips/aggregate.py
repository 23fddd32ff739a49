"""Turn per-model outcomes of one test into the upstream result entry (plus extras).

:class:`TestSummary` folds the outcomes in one model at a time, keeping only what the entry holds,
so a scan never keeps an outcome per model and test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model_debugging.skips.analyze import Outcome


class TestSummary:
    """The entry of one test, built model by model (:meth:`add`), finished by :meth:`entry`."""

    __test__ = False  # not a pytest test class

    def __init__(self, origin: str):
        self.origin = origin
        self._ran: list[str] = []
        self._skips: list[dict[str, Any]] = []
        self._not_applicable: list[str] = []
        self._conditions: list[str] = []

    def add(self, model: str, outcome: Outcome) -> None:
        if outcome.status == "ran":
            self._ran.append(model)
        elif outcome.status == "skipped":
            self._skips.append(
                {
                    "model": model,
                    "reason": outcome.skip.reason,
                    "kind": outcome.skip.kind,
                    "test_class": outcome.test_class,
                    "file": outcome.file,
                    "line": outcome.skip.line,
                }
            )
        elif outcome.status == "not_applicable":
            self._not_applicable.append(model)
        self._conditions.extend(f"{model}: {text}" for text in outcome.conditions)

    def entry(self) -> dict[str, Any]:
        """Upstream keys first, then ``models_not_applicable``, ``skips``, ``conditions``.

        ``skipped_proportion`` is over the models the test applies to (ran + skipped), rounded to 4.
        """
        skips = sorted(self._skips, key=lambda skip: skip["model"])
        skipped = [skip["model"] for skip in skips]
        applicable = len(self._ran) + len(skipped)
        return {
            "origin": self.origin,
            "models_ran": sorted(self._ran),
            "models_skipped": skipped,
            "skipped_proportion": round(len(skipped) / applicable, 4) if applicable else 0.0,
            "reasons_skipped": sorted(f"{skip['model']}: {skip['reason']}" for skip in skips),
            "models_not_applicable": sorted(self._not_applicable),
            "skips": skips,
            "conditions": sorted(self._conditions),
        }


def summarize(origin: str, outcomes: Mapping[str, Outcome]) -> dict[str, Any]:
    """The entry for one test from all its per-model outcomes at once (see :class:`TestSummary`)."""
    summary = TestSummary(origin)
    for model, outcome in outcomes.items():
        summary.add(model, outcome)
    return summary.entry()
