"""The (model, test class, test) skips a change introduces, why each is new, and which to flag.

A row is a pair that base ran (or did not have) and head does not run: a test class that now skips
the test (listed even when another class of the model still runs it), or a model that ran it and
is now undecided or no longer collects it. Its cause comes from a third scan, head's test files on
base's library: what differs between base and that scan is the test files' doing, what differs
between that scan and head the library's.

When the sides were joined with test runs or inert findings (``scans.py``), a model's state is its
combined status: a pair a run decided is what the run saw, and a pair that runs without reaching an
assertion is *inert*. A pair that base ran and head runs inertly is a row like a new skip. A report
does not say which revision it ran: where the two sides' sources decide a pair differently (the
change touches it), each side's own verdict stands (undecided included; found inert from the sources
counting as a verdict), so the runs decide only the pairs the change leaves alone; the skips of the
test classes come from the verdicts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd

from model_debugging.skips.records.test_files import CANNOT_IMPORT, ParseError
from model_debugging.skips.report.settings import PRCheckSettings
from model_debugging.skips.results.scan_result import ScanResult, TestResult
from model_debugging.skips.source.checkout import model_of

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
# a row of a file pytest can no longer parse or import: the summary names the file, and the check fails
UNCOLLECTABLE = "no longer collected: "
INERT = "inert: runs but reaches no assertion"
# a row of a pair that ran before and that the analyzer cannot decide now (not a skip: a run would tell)
UNDECIDED = "undecided: "
# the ``flagged`` text of a row, by the rule that flags it ("" when none does)
FLAG_LIBRARY, FLAG_MANY, FLAG_RARE = "⚠️ library change", "⚠️ many models at once", "⚠️ rarely skipped"
_RUNNING = ("ran", "inert")
# a model the change adds: its pairs are listed as an existing model's that ran would be
NEW_MODEL = "new model"


@dataclass(frozen=True)
class Scans:
    """The three scans of a check: ``tests_only`` is head's test files on base's library.

    ``changed_tests`` and ``changed_library`` are the scanned files the change touches;
    ``library_causes`` gives, per model whose verdicts read a changed library file, those files
    (None when the head scan could not tell: every changed library file is named then);
    ``conftest_notes`` are head's notes on the ``conftest.py`` files the change adds or edits that
    may skip or drop tests (not modelled, so the rows cannot show what they do); ``edited_guards``
    the ``(path, line, name)`` of the ``@require_*``/``@slow`` helpers it edits (read by name only)."""

    base: ScanResult
    tests_only: ScanResult
    head: ScanResult
    changed_tests: tuple[str, ...]
    changed_library: tuple[str, ...]
    library_causes: dict[str, tuple[str, ...]] | None
    observed_reports: tuple[str, ...] = ()
    inert: bool = False
    conftest_notes: tuple[str, ...] = ()
    edited_guards: tuple[tuple[str, int, str], ...] = ()

    @functools.cached_property
    def new_parse_errors(self) -> tuple[ParseError, ...]:
        """The scanned files head cannot parse, which base could (or did not have)."""
        before = {error.path for error in self.base.errors}
        return tuple(error for error in self.head.errors if error.path not in before)

    @functools.cached_property
    def new_parse_error_of(self) -> dict[str, ParseError]:
        """Per model, the first of :attr:`new_parse_errors` in its test files (asked once per row)."""
        found: dict[str, ParseError] = {}
        for error in self.new_parse_errors:
            found.setdefault(model_of(error.path), error)
        return found

    @property
    def combined(self) -> bool:
        """The sides hold the combined status (joined with test runs or inert findings)."""
        return self.head.combined is not None


def _combined_state(scan: ScanResult, test: str, model: str) -> str | None:
    """The model's combined status of ``test`` ("ran", "inert", ...), None without one."""
    entry = scan.combined.tests.get(test) if scan.combined is not None else None
    if entry is None:
        return None
    return next(
        (status.replace("_", " ") for status, models in entry.models.items() if model in models), None
    )


def _static_state(scan: ScanResult, test: str, model: str) -> str:
    """The model's state of ``test`` from the sources alone (inert when found so statically)."""
    if scan.combined is not None and model in scan.combined.static_inert.get(test, ()):
        return "inert"
    return _model_state(scan.tests.get(test), model)


def _states(scans: Scans, test: str, model: str) -> tuple[str, str]:
    """The pair's state on base and on head: combined, unless the sources of the two sides decide
    it differently (the change touches it, and a report does not say which revision it ran): then
    each side's own verdict stands, undecided included."""
    before, after = _static_state(scans.base, test, model), _static_state(scans.head, test, model)
    if before != after:
        return before, after
    return pair_state(scans.base, test, model), pair_state(scans.head, test, model)


def pair_state(scan: ScanResult, test: str, model: str) -> str:
    """The model's state of ``test``: its combined status when the scan has one, else the verdict."""
    return _combined_state(scan, test, model) or _model_state(scan.tests.get(test), model)


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
    return NEW_MODEL


def class_state(result: TestResult | None, model: str, test_class: str, class_file: str | None) -> str:
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


def _counts(scans: Scans, test: str, side: int) -> tuple[int, int, int, int] | None:
    """``(skipped, decided, undecided, inert)`` models of ``test`` on base (``side`` 0) or head (1),
    in the states of :func:`_states`; None for a test that side does not have. An inert model runs
    the test: it is decided."""
    scan = (scans.base, scans.head)[side]
    if test not in scan.tests:
        return None
    models = set()
    for result in (scans.base, scans.head):
        entry = result.tests.get(test)
        if entry is not None:
            models.update(entry.models_ran, entry.models_skipped, entry.models_undecided)
    states = [_states(scans, test, model)[side] for model in models]
    skipped, inert = states.count("skipped"), states.count("inert")
    return skipped, skipped + inert + states.count("ran"), states.count("undecided"), inert


def share_text(scans: Scans, test: str, side: int) -> str:
    """``skipped/decided (share)``, with the undecided and inert counts; "n/a" without a decided model."""
    counts = _counts(scans, test, side)
    if counts is None:
        return ""
    skipped, decided, undecided, inert = counts
    text = f"{skipped}/{decided} ({skipped / decided:.1%})" if decided else "n/a"
    extra = [f"{count} {name}" for count, name in ((undecided, "undecided"), (inert, "inert")) if count]
    return ", ".join([text, *extra])


def _share(scans: Scans, test: str, side: int) -> float:
    skipped, decided, _, _ = _counts(scans, test, side) or (0, 0, 0, 0)
    return skipped / decided if decided else 0.0


def _newly_skipped_share(scans: Scans, test: str) -> float:
    """How many more models skip ``test`` after the change than before, as a share of the models
    decided on either side: 0 for a test the change adds, or when one model alone is added (one is
    never "many", even in a checkout of a few models); pairs turned undecided move no count."""
    before, after = _counts(scans, test, 0), _counts(scans, test, 1)
    if before is None or after is None or after[0] - before[0] < 2:
        return 0.0
    return (after[0] - before[0]) / max(before[1], after[1])


def _cause(scans: Scans, test: str, model: str, test_class: str | None, class_file: str | None) -> str:
    def state(result: ScanResult) -> str:
        if test_class:
            return class_state(result.tests.get(test), model, test_class, class_file)
        return pair_state(result, test, model)

    by_tests = state(scans.tests_only) != state(scans.base)
    by_library = state(scans.head) != state(scans.tests_only)
    if by_library and not by_tests:
        return LIBRARY
    return BOTH if by_library else TEST_FILES


def _library_files(scans: Scans, model: str) -> tuple[str, ...]:
    if scans.library_causes is None:
        return scans.changed_library
    return scans.library_causes.get(model) or scans.changed_library


def undecided_because(result: TestResult, model: str) -> str:
    prefix = f"{model}: undecided: "
    return next((line[len(prefix) :] for line in result.conditions if line.startswith(prefix)), "")


def _not_collected(scans: Scans, model: str) -> tuple[str, str]:
    """Where and why head no longer collects a test of ``model``: its test file no longer parses or
    imports (a file it imports does not), or its class shadows, deletes or stops collecting the test."""
    error = scans.new_parse_error_of.get(model)
    if error is None:
        return "", _NOT_COLLECTED
    if error.cause is not None:
        broken = "cannot be imported" if error.cause.message.startswith(CANNOT_IMPORT) else "does not parse"
        why = f"a file it imports {broken} ({error.cause.path}, line {error.cause.line})"
    else:
        why = f"the test file does not parse ({error.message})"
    return f"{error.path}:{error.line}", f"{UNCOLLECTABLE}{why}"


def _observed_reason(scan: ScanResult, test: str, model: str) -> str:
    entry = scan.combined.tests.get(test) if scan.combined is not None else None
    return entry.reasons_observed.get(model, "") if entry is not None else ""


def _rows_of_test(scans: Scans, test: str) -> list[dict]:
    head, base = scans.head.tests[test], scans.base.tests.get(test)
    found = []
    for (model, test_class, class_file), skip in head.class_skips().items():
        before = class_state(base, model, test_class, class_file)
        before = _states(scans, test, model)[0] if before == "undecided" else before
        if before == "skipped" or (
            before == "new class" and pair_state(scans.base, test, model) == "skipped"
        ):
            continue  # the class, or the whole model, skipped the test before: nothing stopped running
        where = f"{skip.file}:{skip.line}" if skip.file else ""
        found.append((model, test_class, class_file, where, skip.reason, before))
    if base is not None:
        models = sorted(set(base.models_ran) | set(head.models_ran) | set(head.models_undecided))
        for model in models:
            was, now = _states(scans, test, model)
            if was not in _RUNNING and was != NEW_MODEL:
                continue
            if now == "undecided":
                found.append((model, None, None, "", f"{UNDECIDED}{undecided_because(head, model)}", was))
            elif now == "not applicable":
                found.append((model, None, None, *_not_collected(scans, model), was))
            elif now == "skipped" and _model_state(head, model) != "skipped":  # a run skipped it
                found.append((model, None, None, "", _observed_reason(scans.head, test, model), was))
            elif now == "inert" and was in ("ran", NEW_MODEL):
                found.append((model, None, None, "", INERT, was))
    if not found:
        return []
    # the test's shares, the same on each of its rows (each counts the states of every model)
    shares = {
        "share before": share_text(scans, test, 0),
        "share after": share_text(scans, test, 1),
        "compared share": _share(scans, test, 0 if base is not None else 1),
        "newly skipped share": _newly_skipped_share(scans, test),
    }
    return [
        {
            "test": test,
            "model": model,
            "test class": test_class or "",
            "where": where,
            "reason": reason,
            "before": before,
            **shares,
            "cause": _cause(scans, test, model, test_class, class_file),
        }
        for model, test_class, class_file, where, reason, before in found
    ]


def find_introduced_skips(scans: Scans, settings: PRCheckSettings) -> pd.DataFrame:
    """Every skip the change introduces, one row per (test, model, test class), and every pair that
    ran before and is inert now (``reason``: inert), when the sides hold the combined status.

    ``why new`` says ``test files`` (the skip is at ``where``), ``library: <files>`` (the changed
    library files the model's verdicts read) or both. ``flagged`` names the first rule that flags
    the row, "" when none does: :data:`FLAG_LIBRARY`, a row the library alone explains when
    ``settings.flag_library_skips``; for the other rows, :data:`FLAG_MANY`, a skip (not an undecided
    pair) of a test that more than ``settings.max_newly_skipped_share`` of the models (and more than
    one) skip after the change and did not before; :data:`FLAG_RARE`, fewer than
    ``settings.min_skipped_share`` of the models skipped the test before (for a test the change
    adds: after). The last two never flag a row of a file pytest can no longer parse or import (the
    summary names the file, and the check fails on it).

    Returns:
        `pandas.DataFrame`: columns :data:`INTRODUCED_COLUMNS`; flagged rows first, then by test,
        model and class.
    """
    rows = []
    for test in scans.head.tests:
        for row in _rows_of_test(scans, test):
            cause = row.pop("cause")
            compared, newly_skipped = row.pop("compared share"), row.pop("newly skipped share")
            # the test files' rows, but not where pytest cannot collect the file at all
            pondered = cause != LIBRARY and not row["reason"].startswith(UNCOLLECTABLE)
            flags = (
                (FLAG_LIBRARY, cause == LIBRARY and settings.flag_library_skips),
                (
                    FLAG_MANY,
                    pondered
                    and not row["reason"].startswith(UNDECIDED)
                    and newly_skipped > settings.max_newly_skipped_share,
                ),
                (FLAG_RARE, pondered and compared < settings.min_skipped_share),
            )
            flagged = next((text for text, holds in flags if holds), "")
            files = ", ".join(_library_files(scans, row["model"])) if cause != TEST_FILES else ""
            rows.append({**row, "why new": f"{cause}: {files}" if files else cause, "flagged": flagged})
    frame = pd.DataFrame(rows, columns=INTRODUCED_COLUMNS)
    return frame.sort_values(
        ["flagged", "test", "model", "test class"],
        ascending=[True, True, True, True],
        key=lambda column: column.eq("") if column.name == "flagged" else column,
        ignore_index=True,
    )
