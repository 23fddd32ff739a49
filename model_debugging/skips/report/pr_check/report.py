"""Lay out the skips a change introduces as a :class:`Report` that says whether the check passes."""

from __future__ import annotations

import re

import pandas as pd

from model_debugging.reporting.report import ItemsSection, Report, Section
from model_debugging.skips.report.broken_files import broken_file_lines, first_five
from model_debugging.skips.report.pr_check.git_snapshot import BaseRevision
from model_debugging.skips.report.pr_check.grouping import GROUP_FROM, grouped
from model_debugging.skips.report.pr_check.introduced import (
    FLAG_LIBRARY,
    FLAG_MANY,
    FLAG_RARE,
    INERT,
    NEW_MODEL,
    TEST_FILES,
    UNCOLLECTABLE,
    UNDECIDED,
    Scans,
)
from model_debugging.skips.report.settings import PRCheckSettings
from model_debugging.skips.source.conftest_notes import note_subject


def build_pr_report(
    introduced: pd.DataFrame,
    removed: pd.DataFrame,
    scans: Scans,
    settings: PRCheckSettings,
    base: BaseRevision,
) -> Report:
    """Lay out the introduced skips as a report whose summary says whether the check passes, and
    the ``removed`` ones (``find_removed_skips``) after them. Rows that differ only in their model
    and test class are one line each (``grouping.py``), their models listed under the table."""
    threshold = f"{settings.min_skipped_share:.0%}"
    uncollectable = introduced["reason"].str.startswith(UNCOLLECTABLE)
    rows = introduced[~uncollectable]
    shown, lists = grouped(introduced, _introduced_title)
    summary = [_count_line(rows, shown, base)]
    if not rows.empty:
        flagged = rows["flagged"]
        if (flagged == FLAG_RARE).any():
            summary.append(
                f"⚠️ {_pairs(rows[flagged == FLAG_RARE])} hit a test that fewer than {threshold} of models skipped "
                "before. Such a test has rarely been skipped: maybe ponder whether the model can pass it instead."
            )
        if (flagged == FLAG_MANY).any():
            summary.append(_many_models_line(rows[flagged == FLAG_MANY], settings))
        if (flagged == FLAG_LIBRARY).any():
            summary.append(
                f"⚠️ {_pairs(rows[flagged == FLAG_LIBRARY])} come from a change in the library alone (no test file "
                "explains them): the library files named under 'why new' changed what these tests decide at run time."
            )
        if (flagged == "").all() and not rows["reason"].str.startswith(UNDECIDED).all():
            summary.append(
                f"Each skips a test that at least {threshold} of models already skipped, for at most "
                f"{settings.max_newly_skipped_share:.0%} of the models more."
            )
    if uncollectable.any():
        summary.append(
            f"{_pairs(introduced[uncollectable])} pair(s) are tests pytest no longer collects, because a scanned "
            "file no longer parses or imports (named above); each row says which."
        )
    # what explains many rows at once comes first: the base compared with, a shared file broken
    summary[1:1] = _base_note(base) + broken_file_lines(scans.new_parse_errors, new=True)
    if scans.conftest_notes:
        summary.append(
            f"⚠️ The change adds or edits {len(scans.conftest_notes)} conftest.py file(s) that may skip or drop "
            "tests; the check does not run them, so the rows cannot show which tests they skip: "
            + "; ".join(note_subject(note) for note in scans.conftest_notes)
            + "."
        )
    if scans.edited_guards:
        summary.append(_guards_line(scans))
    gone = [test for test in scans.base.tests if test not in scans.head.tests]
    if gone:
        summary.append(
            f"{len(gone)} common test(s) of `{base.ref}` are no longer defined, so no model runs them: "
            + first_five(gone)
            + "."
        )
    units = _UNITS if not (introduced.empty and removed.empty) else "Shares are skipped/decided models."
    summary.append(
        f"The change touches {len(scans.changed_tests)} of the scanned {TEST_FILES} and "
        f"{len(scans.changed_library)} library file(s). {units}"
    )
    sections: list[Section | ItemsSection] = [
        Section("Skips introduced by this change", shown, settings.max_rows, "None.", unit="row"),
        *lists,
    ]
    if not removed.empty:
        shown, lists = grouped(removed, _removed_title)
        summary.append(_removed_line(removed, shown))
        sections += [Section("Skips removed by this change", shown, settings.max_rows, unit="row"), *lists]
    if scans.combined:
        summary.append(_combined_text(scans, introduced))
    return Report("New skipped tests", summary, sections)


def _introduced_title(row: pd.Series, models: int) -> str:
    reason = row["reason"]
    for prefix, verb in ((UNDECIDED, "now undecided"), (UNCOLLECTABLE, "no longer collected")):
        if reason.startswith(prefix):
            return f"The {models} models for which {row['test']} is {verb} ({reason[len(prefix) :]})"
    verb = "now inert" if reason == INERT else "newly skipped"
    where = f"{row['where']}: " if row["where"] else ""
    return f"The {models} models for which {row['test']} is {verb} ({where}{reason})"


def _removed_title(row: pd.Series, models: int) -> str:
    where = f"{row['where']}: " if row["where"] else ""
    return f"The {models} models for which {row['test']} is no longer skipped ({where}{row['reason']}; now {row['now']})"


def _removed_line(removed: pd.DataFrame, shown: pd.DataFrame) -> str:
    """How many skips the change removes, of how many models and which tests, and in how many of
    the rows of their own section (``shown``)."""
    tests = removed["test"].unique()
    return (
        f"The change removes {_skips(removed)}, in {len(tests)} test(s) "
        f"({first_five([f'`{test}`' for test in tests])}){_in_rows(removed, len(shown))}: "
        "listed under 'Skips removed by this change', with what each pair does now."
    )


# what the numbers of the summary and the tables count, said once under the summary
_UNITS = (
    "A skip is a test that a model stops running (in one of its test classes at least); the tables "
    f"have a row per test class, and rows of {GROUP_FROM} models or more alike are one row; shares are "
    "skipped/decided models."
)


def _pairs(rows: pd.DataFrame) -> int:
    """How many (test, model) pairs ``rows`` (one per test class) are about: the skips they count."""
    return len(rows.drop_duplicates(["test", "model"]))


def _skips(rows: pd.DataFrame, adjective: str = "") -> str:
    """``"12 new skips of 3 models"``: the (test, model) pairs of ``rows``, and their models."""
    pairs, models = _pairs(rows), rows["model"].nunique()
    return f"{pairs} {adjective}skip{'' if pairs == 1 else 's'} of {models} model{'' if models == 1 else 's'}"


def _in_rows(rows: pd.DataFrame, lines: int) -> str:
    """``", in 11 rows"`` when the table shows ``rows`` in another number of ``lines`` than their skips."""
    return "" if lines == _pairs(rows) else f", in {lines} row{'' if lines == 1 else 's'}"


def _count_line(rows: pd.DataFrame, shown: pd.DataFrame, base: BaseRevision) -> str:
    """How many skips, of how many models, and in how many rows of the table (``shown``, its rows
    folded); then how many pairs the analyzer can no longer decide, by cause: a pair now undecided is
    not a skip (only a run can tell), and the first line says so."""

    def by_cause(part: pd.DataFrame) -> str:
        causes = part.drop_duplicates(["test", "model"])["why new"].str.partition(":")[0].value_counts()
        return ", ".join(f"{count} by {cause}" for cause, count in causes.items())

    undecided = rows["reason"].str.startswith(UNDECIDED)
    skips, unknown = rows[~undecided], rows[undecided]
    if skips.empty:
        line = f"No new skips compared with {_compared_with(base)}"
    else:
        lines = int((~shown["reason"].str.startswith((UNDECIDED, UNCOLLECTABLE))).sum())
        line = (
            f"{_skips(skips, 'new ')} compared with {_compared_with(base)} ({by_cause(skips)})"
            + _in_rows(skips, lines)
            + _of_new_models(skips)
        )
    if unknown.empty:
        return line + "."
    pairs = _pairs(unknown)
    pairs_text = "1 pair is" if pairs == 1 else f"{pairs} pairs are"
    return (
        f"{line}; {pairs_text} now undecided ({by_cause(unknown)}): the analyzer cannot tell without a run "
        "whether they skip (the reason says what only a run knows)."
    )


def _of_new_models(skips: pd.DataFrame) -> str:
    """How many of ``skips`` are of models the change adds (not skips of a model that ran the test)."""
    added = skips[skips["before"] == NEW_MODEL]
    if added.empty:
        return ""
    names = sorted(added["model"].unique())
    models = f"{names[0]}, a model" if len(names) == 1 else f"the {len(names)} models ({first_five(names)})"
    share = "all" if _pairs(added) == _pairs(skips) else str(_pairs(added))
    return f"; {share} of them of {models} the change adds"


def _guards_line(scans: Scans) -> str:
    """The ``@require_*``/``@slow`` helpers the change edits, each with the common tests carrying it:
    the analyzer reads them by name only, so no row can show a test they now skip."""
    helpers = []
    for path, line, name in scans.edited_guards:
        written = re.compile(rf"^[^:]+: (?:[\w.]*\.)?{re.escape(name)}\b")
        tests = [
            f"`{test}`"
            for test, result in scans.head.tests.items()
            if any(written.match(condition) for condition in result.conditions)
        ]
        on = f"on {len(tests)} common test(s): {first_five(tests)}" if tests else "on no common test"
        helpers.append(f"`{name}` ({path}:{line}, {on})")
    return (
        f"⚠️ The change edits {len(helpers)} environment guard(s), which the analyzer reads by name only and "
        "never runs, so no row can show a test they now skip: " + "; ".join(helpers) + ". Check what they "
        "now ask of the machine: a guard that no longer passes where everything is installed skips every "
        "test it decorates."
    )


def _many_models_line(rows: pd.DataFrame, settings: PRCheckSettings) -> str:
    """The tests the change skips for many models at once, each with its share before and after."""
    tests = rows.drop_duplicates("test")
    moves = [
        f"`{row['test']}` {row['share before']} → {row['share after']}" for _, row in tests.head(5).iterrows()
    ]
    more = f" and {len(tests) - 5} more tests" if len(tests) > 5 else ""
    return (
        f"⚠️ {_pairs(rows)} skip a test for many models at once (more than {settings.max_newly_skipped_share:.0%} "
        f"of the models stop running it): {'; '.join(moves)}{more}. A skip in a shared file (a common "
        "test, a tester, a base class) reaches every model inheriting it: maybe fix the test instead."
    )


def _compared_with(base: BaseRevision) -> str:
    return f"`{base.ref}` at {base.commit[:12]}" if base.later_commits else f"`{base.ref}`"


def _base_note(base: BaseRevision) -> list[str]:
    """A line when the commit compared with is not the tip of the ref the user named."""
    if base.later_commits is None:
        return [
            f"⚠️ This checkout holds no history joining HEAD to `{base.ref}` (a shallow clone?), so the check "
            f"compares with the tip of `{base.ref}`: what `{base.ref}` changed after HEAD forked from it shows "
            "here as this change's, reversed. Fetch the history (fetch-depth: 0) to compare with the fork point."
        ]
    if base.later_commits:
        return [
            f"HEAD forked from `{base.ref}` at {base.commit[:12]}: the check compares with that commit, as the "
            f"pull request's diff does, so the {base.later_commits} commit(s) `{base.ref}` gained since are not "
            "counted as this change."
        ]
    return []


def _combined_text(scans: Scans, introduced: pd.DataFrame) -> str:
    """What the statuses come from when the sides were joined with test runs or inert findings."""
    joined = []
    if scans.observed_reports:
        joined.append(
            f"{len(scans.observed_reports)} test-run report(s) ({', '.join(scans.observed_reports)})"
        )
    if scans.inert:
        joined.append("the tests found inert in each side's sources")
    inert = int((introduced["reason"] == INERT).sum()) if not introduced.empty else 0
    return (
        f"States are the combined status: each side's verdicts joined with {' and '.join(joined)}. "
        f"A pair that ran before and now runs without reaching an assertion is listed as inert ({inert}). "
        "Where the change alters what the sources decide for a pair, each side's own verdict stands "
        "(a report does not say which revision it ran)."
    )
