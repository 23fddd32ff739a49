"""What a test run's report says, read into plain records before anything is named or joined."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ReportError(Exception):
    """A report that cannot be read: the message names the file (and the line or key) and what was wrong."""


class RunOutcome(str, Enum):
    """What pytest did with one test item."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # setup or teardown failed
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"

    @property
    def ran(self) -> bool:
        """The test got past its skips (a failure or an expected failure ran it too)."""
        return self is not RunOutcome.SKIPPED


@dataclass(frozen=True)
class RunItem:
    """One test item of a report, or one folded line of several skipped items.

    ``path`` is the test file relative to the checkout root. A folded skip (``SKIPPED [3]
    tests/x.py:120: reason`` in a ``-rA`` summary) has no ``name``, only the ``line`` pytest shows:
    that of the skipped test's definition (its first decorator), and ``count`` items.
    """

    path: str
    test_class: str | None
    name: str | None  # as collected: a case name for an expanded or parametrized test
    outcome: RunOutcome
    reason: str = ""
    line: int | None = None
    count: int = 1
    base: str | None = None  # the test's own function name, when the report knows it (the plugin's)
    assertions: int | None = None  # assertions reached while it ran, when counted (the plugin's)
    checks: bool | None = None  # whether the test's body holds an assertion (the plugin's)
    model: str | None = None  # the model the report says this item belongs to (CI per-model reports)


@dataclass(frozen=True)
class Report:
    """One report file (or ``--make-reports`` folder) and its items.

    ``commit`` is the checkout revision the report names, if any. A report of a run with skip decorators ignored
    (``ignores_skips``) shows which skips are stale; it never decides a pair's status.
    """

    path: str
    kind: str  # "junit", "make-reports", "collated", "plugin"
    machine: str  # what tells this run apart from the others (a file, a CI machine type and GPU)
    items: tuple[RunItem, ...]
    commit: str | None = None
    ignores_skips: bool = False
    counts_assertions: bool = False
    warnings: tuple[str, ...] = ()  # what looked wrong in it, short of making it unreadable
