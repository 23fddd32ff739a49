"""Fold per-model outcomes of one test into its :class:`~model_debugging.skips.results.TestResult`.

:class:`TestSummary` takes the outcomes one model at a time, keeping only what the result holds,
so a scan never keeps an outcome per model and test.
"""

from __future__ import annotations

from model_debugging.skips.outcome import Outcome, Status
from model_debugging.skips.results import ClassVerdict, SkippedPair, TestResult


class TestSummary:
    """The result of one test, built model by model (:meth:`add`), finished by :meth:`result`."""

    __test__ = False  # not a pytest test class

    def __init__(self, origin: str):
        self.origin = origin
        self._ran: list[str] = []
        self._skips: list[SkippedPair] = []
        self._undecided: list[str] = []
        self._not_applicable: list[str] = []
        self._conditions: list[str] = []
        self._classes: list[ClassVerdict] = []

    def add(self, model: str, outcome: Outcome) -> None:
        if any(part.status is not Status.RAN for part in outcome.classes):  # all ran: the model says it
            self._classes.extend(_class_verdict(model, part) for part in outcome.classes)
        if outcome.status is Status.RAN:
            self._ran.append(model)
        elif outcome.status is Status.SKIPPED:
            self._skips.append(_skipped_pair(model, outcome))
        elif outcome.status is Status.UNDECIDED:
            self._undecided.append(model)
            self._conditions.append(f"{model}: undecided: {outcome.undecided_because}")
        else:
            self._not_applicable.append(model)
        self._conditions.extend(f"{model}: {text}" for text in outcome.conditions)

    def result(self) -> TestResult:
        return TestResult(
            origin=self.origin,
            models_ran=tuple(sorted(self._ran)),
            skips=tuple(sorted(self._skips, key=lambda skip: skip.model)),
            models_undecided=tuple(sorted(self._undecided)),
            models_not_applicable=tuple(sorted(self._not_applicable)),
            conditions=tuple(sorted(self._conditions)),
            classes=tuple(
                sorted(
                    self._classes, key=lambda verdict: (verdict.model, verdict.test_class, verdict.class_file)
                )
            ),
        )


def _skipped_pair(model: str, outcome: Outcome) -> SkippedPair:
    skip = outcome.skip
    return SkippedPair(model, skip.reason, skip.kind, outcome.test_class, outcome.file, skip.line)


def _class_verdict(model: str, outcome: Outcome) -> ClassVerdict:
    skip = _skipped_pair(model, outcome) if outcome.status is Status.SKIPPED else None
    return ClassVerdict(
        model,
        outcome.test_class or "",
        outcome.class_file or "",
        outcome.status,
        skip,
        outcome.undecided_because,
    )
