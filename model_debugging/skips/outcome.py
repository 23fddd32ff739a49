"""The verdict on one (model, test) pair, and what it carries."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from model_debugging.skips.records import Skip


class Status(str, Enum):
    """The verdict for one (model, test) pair; every pair gets exactly one."""

    RAN = "ran"  # pytest runs it (perhaps under environment conditions, listed apart)
    SKIPPED = "skipped"  # pytest skips it whatever the environment
    UNDECIDED = "undecided"  # it depends on something the analyzer cannot evaluate statically
    NOT_APPLICABLE = "not_applicable"  # no collected test class of the model has the test


@dataclass(frozen=True)
class Outcome:
    """What happens to one test in one model.

    ``skip`` is set when ``status`` is skipped; ``undecided_because`` says what could not be
    evaluated when it is undecided. A model's outcome holds, in ``classes``, the outcome of each of
    its test classes when the test applies to more than one (they may disagree: one skips, another
    runs); each of those names the file collecting its class in ``class_file`` (two files of a model
    may define classes of the same name).
    """

    status: Status
    skip: Skip | None = None
    test_class: str | None = None
    file: str | None = None  # where the skip is written (the test class's file when it ran)
    conditions: tuple[str, ...] = ()
    undecided_because: str | None = None
    classes: tuple[Outcome, ...] = ()
    class_file: str | None = None


NOT_APPLICABLE = Outcome(Status.NOT_APPLICABLE)
