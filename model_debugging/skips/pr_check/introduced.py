"""The (model, test class, test) skips a change introduces, why each is new, and which to flag.

A row is a pair that base ran (or did not have) and head does not run: a test class that now skips
the test (listed even when another class of the model still runs it), or a model that ran it and
is now undecided or no longer collects it. Its cause comes from a third scan, head's test files on
base's library: what differs between base and that scan is the test files' doing, what differs
between that scan and head the library's.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from model_debugging.skips.report_settings import PRCheckSettings
from model_debugging.skips.results import ScanResult, TestResult

INTRODUCED_COLUMNS = [
    "test",
    "model",
    "test class",
    "where",
    "reason",
    "before",
    "share before",
    "share after",
    "why new",
    "flagged",
]
TEST_FILES, LIBRARY, BOTH = "test files", "library", "test files and library"
_NOT_COLLECTED = "no longer collected (the class shadows, deletes or stops collecting the test)"


@dataclass(frozen=True)
class Scans:
    """The three scans of a check: ``tests_only`` is head's test files on base's library.

    ``changed_tests`` and ``changed_library`` are the scanned files the change touches;
    ``library_causes`` gives, per model whose verdicts read a changed library file, those files
    (None when the head scan could not tell: every changed library file is named then)."""

    base: ScanResult
    tests_only: ScanResult
    head: ScanResult
    changed_tests: tuple[str, ...]
    changed_library: tuple[str, ...]
    library_causes: dict[str, tuple[str, ...]] | None


def _model_state(result: TestResult | None, model: str) -> str:
    if result is None:
        return "new test"
    for state, models in (
        ("ran", result.models_ran),
        ("skipped", result.models_skipped),
        ("undecided", result.models_undecided),
        ("not applicable", result.models_not_applicable),
    ):
        if model in models:
            return state
    return "new model"


def _class_state(result: TestResult | None, model: str, test_class: str, class_file: str | None) -> str:
    """What ``test_class`` of ``model`` (collected by ``class_file``, None when unknown) does: its
    own verdict when the model's classes disagree, else the model's ("new class" for a class the
    model did not have)."""
    if result is None:
        return "new test"
    classes = [verdict for verdict in result.classes if verdict.model == model]
    for verdict in classes:
        if verdict.test_class == test_class and class_file in (None, verdict.class_file):
            return verdict.status.value.replace("_", " ")
    state = _model_state(result, model)
    skipping = {(name, file) for (owner, name, file) in result.class_skips() if owner == model}
    if classes or (state == "skipped" and not ({(test_class, class_file), (test_class, None)} & skipping)):
        return "new class"
    return state


def share_text(result: TestResult | None) -> str:
    """``skipped/decided (share)``, with the undecided count; "n/a" without a decided model."""
    if result is None:
        return ""
    decided = len(result.models_ran) + len(result.skips)
    text = f"{len(result.skips)}/{decided} ({len(result.skips) / decided:.1%})" if decided else "n/a"
    return f"{text}, {len(result.models_undecided)} undecided" if result.models_undecided else text


def _share(result: TestResult) -> float:
    decided = len(result.models_ran) + len(result.skips)
    return len(result.skips) / decided if decided else 0.0


def _cause(scans: Scans, test: str, model: str, test_class: str | None, class_file: str | None) -> str:
    def state(result: ScanResult) -> str:
        entry = result.tests.get(test)
        return (
            _class_state(entry, model, test_class, class_file) if test_class else _model_state(entry, model)
        )

    by_tests = state(scans.tests_only) != state(scans.base)
    by_library = state(scans.head) != state(scans.tests_only)
    if by_library and not by_tests:
        return LIBRARY
    return BOTH if by_library else TEST_FILES


def _library_files(scans: Scans, model: str) -> tuple[str, ...]:
    if scans.library_causes is None:
        return scans.changed_library
    return scans.library_causes.get(model) or scans.changed_library


def _undecided_because(result: TestResult, model: str) -> str:
    prefix = f"{model}: undecided: "
    return next((line[len(prefix) :] for line in result.conditions if line.startswith(prefix)), "")


def _rows_of_test(scans: Scans, test: str) -> list[dict]:
    head, base = scans.head.tests[test], scans.base.tests.get(test)
    found = []
    for (model, test_class, class_file), skip in head.class_skips().items():
        before = _class_state(base, model, test_class, class_file)
        if before == "skipped" or (before == "new class" and _model_state(base, model) == "skipped"):
            continue  # the class, or the whole model, skipped the test before: nothing stopped running
        where = f"{skip.file}:{skip.line}" if skip.file else ""
        found.append((model, test_class, class_file, where, skip.reason, before))
    if base is not None:
        for model in sorted(set(base.models_ran) & set(head.models_undecided)):
            found.append((model, None, None, "", f"undecided: {_undecided_because(head, model)}", "ran"))
        for model in sorted(set(base.models_ran) & set(head.models_not_applicable)):
            found.append((model, None, None, "", _NOT_COLLECTED, "ran"))
    return [
        {
            "test": test,
            "model": model,
            "test class": test_class or "",
            "where": where,
            "reason": reason,
            "before": before,
            "share before": share_text(base),
            "share after": share_text(head),
            "cause": _cause(scans, test, model, test_class, class_file),
            "compared share": _share(base if base is not None else head),
        }
        for model, test_class, class_file, where, reason, before in found
    ]


def find_introduced_skips(scans: Scans, settings: PRCheckSettings) -> pd.DataFrame:
    """Every skip the change introduces, one row per (test, model, test class).

    ``why new`` says ``test files`` (the skip is at ``where``), ``library: <files>`` (the changed
    library files the model's verdicts read) or both. ``flagged``: a row the library alone explains
    when ``settings.flag_library_skips``; any other when fewer than ``settings.min_skipped_share``
    of the models skipped the test before (for a test the change adds: after).

    Returns:
        `pandas.DataFrame`: columns :data:`INTRODUCED_COLUMNS`; flagged rows first, then by test,
        model and class.
    """
    rows = []
    for test in scans.head.tests:
        for row in _rows_of_test(scans, test):
            cause = row.pop("cause")
            compared = row.pop("compared share")
            if cause == LIBRARY:
                flagged = settings.flag_library_skips
            else:
                flagged = compared < settings.min_skipped_share
            files = ", ".join(_library_files(scans, row["model"])) if cause != TEST_FILES else ""
            rows.append({**row, "why new": f"{cause}: {files}" if files else cause, "flagged": flagged})
    frame = pd.DataFrame(rows, columns=INTRODUCED_COLUMNS)
    return frame.sort_values(
        ["flagged", "test", "model", "test class"], ascending=[False, True, True, True], ignore_index=True
    )
