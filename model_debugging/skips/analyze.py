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

from model_debugging.skips.calls import method_skip
from model_debugging.skips.collect import CollectedClass, collect_test_classes
from model_debugging.skips.outcome import NOT_APPLICABLE, Outcome, Status
from model_debugging.skips.records import SkipKind
from model_debugging.skips.resolve import Resolver

__all__ = ["Outcome", "Status", "class_outcome", "collect_test_classes", "model_outcome"]


def class_outcome(resolver: Resolver, test_class: CollectedClass, test_name: str) -> Outcome:
    """Run or skip for one class; the caller has checked that the test applies to it."""
    if test_class.class_skip is not None:
        owner, skip = test_class.class_skip
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(owner))
    owner, method = test_class.definitions[test_name]
    if method.skip is not None and method.skip.kind is SkipKind.DECORATOR:  # checked before setUp runs
        return Outcome(Status.SKIPPED, method.skip, test_class.ref.name, resolver.path_of(owner))
    if test_class.setup_skip is not None:
        where, skip = test_class.setup_skip
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
        return test_class.ran
    conditions = list(test_class.ran.conditions)
    found = method_skip(resolver, test_class, owner, method, conditions, set())
    if found is not None:
        where, skip = found
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    conditions = tuple(dict.fromkeys(conditions))
    if conditions == test_class.ran.conditions:  # the usual case: share the class's outcome, no new object
        return test_class.ran
    return Outcome(Status.RAN, None, test_class.ref.name, test_class.file, conditions)


def model_outcome(resolver: Resolver, classes: Iterable[CollectedClass], test_name: str) -> Outcome:
    outcomes = [
        class_outcome(resolver, test_class, test_name)
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
