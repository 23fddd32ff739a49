"""Decide, for every model and common test, whether pytest would run or skip it.

For each collected test class of a model (see ``collect.py``), the test applies when one of the
classes defining it in the common files is in the class's MRO. It is skipped when the class is
skipped as a whole, the definition carries a skip decorator, ``setUpClass``/``setUp`` always skip,
the definition is unconditionally skipped, or one of its flag guards is true for this class —
following the ``self.helper()`` and ``super().test_x()`` calls it makes at its top level. A model
skips a test when every applicable class skips it; it is undecided when no class runs it and one
cannot be decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from model_debugging.skips.calls import method_skip
from model_debugging.skips.collect import CollectedClass, collect_test_classes
from model_debugging.skips.outcome import NOT_APPLICABLE, Outcome, Status
from model_debugging.skips.reasons import with_class_placeholders
from model_debugging.skips.records import Skip, SkipKind
from model_debugging.skips.resolve import Resolver

if TYPE_CHECKING:
    from model_debugging.skips.runtime.checks import RuntimeChecks

__all__ = ["Outcome", "Status", "class_outcome", "collect_test_classes", "model_outcome"]


def class_outcome(
    resolver: Resolver, test_class: CollectedClass, test_name: str, runtime: RuntimeChecks | None = None
) -> Outcome:
    """Run or skip for one class; the caller has checked that the test applies to it.

    With ``runtime``, a test the source does not skip outright is then run on the library's facts
    (see ``skips/runtime``): a skip it reaches counts, a condition it cannot evaluate makes it undecided.
    """
    if test_class.class_skip is not None:
        owner, skip = test_class.class_skip
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(owner))
    owner, method = test_class.definitions[test_name]
    if method.skip is not None and method.skip.kind is SkipKind.DECORATOR:  # checked before setUp runs
        return Outcome(Status.SKIPPED, method.skip, test_class.ref.name, resolver.path_of(owner))
    if test_class.setup_skip is not None:
        where, skip = test_class.setup_skip
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    for where, by_name in test_class.setup_name_skips:
        if by_name.matches(test_name):
            skip = Skip(SkipKind.SETUP, by_name.reason, by_name.line)
            return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    if test_class.undecided is not None:
        return Outcome(
            Status.UNDECIDED,
            None,
            test_class.ref.name,
            test_class.file,
            undecided_because=test_class.undecided,
        )
    if method.skip is None and not method.guards and not method.conditions and not method.calls:
        decided = _runtime_outcome(resolver, test_class, test_name, runtime, test_class.ran.conditions)
        return test_class.ran if decided is None else decided
    conditions = list(test_class.ran.conditions)
    found = method_skip(resolver, test_class, owner, method, conditions, set())
    if found is not None:
        where, skip = found
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    conditions = tuple(dict.fromkeys(conditions))
    decided = _runtime_outcome(resolver, test_class, test_name, runtime, conditions)
    if decided is not None:
        return decided
    if conditions == test_class.ran.conditions:  # the usual case: share the class's outcome, no new object
        return test_class.ran
    return Outcome(Status.RAN, None, test_class.ref.name, test_class.file, conditions)


def _runtime_outcome(
    resolver: Resolver,
    test_class: CollectedClass,
    test_name: str,
    runtime: RuntimeChecks | None,
    conditions: tuple[str, ...],
) -> Outcome | None:
    """The run-time skip or doubt of the common definition; None when it runs (or without ``runtime``)."""
    verdict = runtime.verdict(resolver, test_class, test_name) if runtime is not None else None
    if verdict is None or verdict.status == "ran":
        return None
    owner, _ = test_class.definitions[test_name]
    where = resolver.path_of(owner)
    if verdict.status == "skipped":
        skip = Skip(SkipKind.RUNTIME, verdict.reason, verdict.line)
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, where, conditions)
    because = f"if {verdict.condition}: skip (decided at run time)"
    return Outcome(Status.UNDECIDED, None, test_class.ref.name, where, conditions, undecided_because=because)


def model_outcome(
    resolver: Resolver,
    classes: Iterable[CollectedClass],
    test_name: str,
    runtime: RuntimeChecks | None = None,
) -> Outcome:
    outcomes = [
        with_class_placeholders(
            resolver, test_class.linearization, class_outcome(resolver, test_class, test_name, runtime)
        )
        for test_class in classes
        if test_name in test_class.applicable
    ]
    if not outcomes:
        return NOT_APPLICABLE
    ran = [outcome for outcome in outcomes if outcome.status is Status.RAN]
    if not ran:  # skipped when every class skips it; undecided when one class might run it
        undecided = [outcome for outcome in outcomes if outcome.status is Status.UNDECIDED]
        return undecided[0] if undecided else outcomes[0]
    if len(ran) == 1:  # its conditions are de-duplicated already; sharing it keeps one object per class
        return ran[0]
    conditions = tuple(dict.fromkeys(text for outcome in ran for text in outcome.conditions))
    return Outcome(Status.RAN, None, ran[0].test_class, ran[0].file, conditions)
