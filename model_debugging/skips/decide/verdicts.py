"""Decide, for every model and common test, whether pytest would run or skip it.

For each collected test class of a model (see ``resolve/collect.py``), the test applies when one of the
classes defining it in the common files is in the class's MRO. It is skipped when the class is
skipped as a whole, the definition carries a skip decorator, ``setUpClass``/``setUp`` always skip,
the definition is unconditionally skipped, or one of its flag guards is true for this class —
following the ``self.helper()`` and ``super().test_x()`` calls it makes at its top level. A model
skips a test when every applicable class skips it; it is undecided when no class runs it and one
cannot be decided.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from model_debugging.skips.decide.reasons import with_class_placeholders
from model_debugging.skips.records.outcome import NOT_APPLICABLE, Outcome, Status
from model_debugging.skips.records.test_files import Method, Skip, SkipKind
from model_debugging.skips.resolve.calls import method_skip
from model_debugging.skips.resolve.classes import ClassRef, Resolver
from model_debugging.skips.resolve.collect import CollectedClass, collect_test_classes

if TYPE_CHECKING:
    from model_debugging.skips.decide.runtime_checks import RuntimeChecks

__all__ = ["Outcome", "Status", "class_outcome", "collect_test_classes", "model_outcome"]


def class_outcome(
    resolver: Resolver, test_class: CollectedClass, test_name: str, runtime: RuntimeChecks | None = None
) -> Outcome:
    """Run or skip for one class; the caller has checked that the test applies to it.

    With ``runtime``, a test the source does not skip outright is then run on the library's facts
    (see ``skips/interp``): a skip it reaches counts, a condition it cannot evaluate makes it undecided.
    """
    if test_class.plain:
        return _plain_outcome(resolver, test_class, test_name, runtime)
    if test_class.class_skip is not None:
        owner, skip = test_class.class_skip
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(owner))
    expanding = test_class.expanded.get(test_name)
    if expanding is not None:
        return _expanded_outcome(resolver, test_class, test_name, runtime, expanding)
    return _definition_outcome(resolver, test_class, test_name, runtime)


def _definition_outcome(
    resolver: Resolver,
    test_class: CollectedClass,
    test_name: str,
    runtime: RuntimeChecks | None,
    overridden: frozenset[int] = frozenset(),
) -> Outcome:
    """What running the definition ``test_name`` resolves to in ``test_class`` gives (for an expanded
    test, in the cases whose numbers are not ``overridden``)."""
    owner, method = test_class.definitions[test_name]
    if method.skip is not None and method.skip.kind is SkipKind.DECORATOR:  # checked before setUp runs
        return Outcome(Status.SKIPPED, method.skip, test_class.ref.name, resolver.path_of(owner))
    set_up = _setup_outcome(resolver, test_class, test_name)
    if set_up is not None:
        return set_up
    if method.unread is not None:
        where = resolver.path_of(owner)
        return Outcome(Status.UNDECIDED, None, test_class.ref.name, where, undecided_because=method.unread)
    if method.skip is None and not method.guards and not method.conditions and not method.calls:
        decided = _runtime_outcome(
            resolver, test_class, test_name, runtime, test_class.ran.conditions, overridden
        )
        return test_class.ran if decided is None else decided
    conditions = list(test_class.ran.conditions)
    found = method_skip(resolver, test_class, owner, method, conditions, set())
    if found is not None:
        where, skip = found
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    conditions = tuple(dict.fromkeys(conditions))
    decided = _runtime_outcome(resolver, test_class, test_name, runtime, conditions, overridden)
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
    overridden: frozenset[int] = frozenset(),
) -> Outcome | None:
    """The run-time skip or doubt of the common definition; None when it runs (or without ``runtime``)."""
    verdict = runtime.verdict(resolver, test_class, test_name, overridden) if runtime is not None else None
    if verdict is None or verdict.status == "ran":
        return None
    owner, _ = test_class.definitions[test_name]
    where = resolver.path_of(owner)
    if verdict.status == "skipped":
        skip = Skip(SkipKind.RUNTIME, verdict.reason, verdict.line)
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, where, conditions)
    because = f"if {verdict.condition}: skip (decided at run time)"
    if verdict.unknown:
        because = f"{verdict.unknown} (if {verdict.condition}: skip)"
    return Outcome(Status.UNDECIDED, None, test_class.ref.name, where, conditions, undecided_because=because)


def _plain_outcome(
    resolver: Resolver, test_class: CollectedClass, test_name: str, runtime: RuntimeChecks | None
) -> Outcome:
    """A test of a plain pytest class (not a ``unittest.TestCase``): pytest honours its marks, the
    module's skips and a skip decorator on the test (whose wrapper raises ``SkipTest``), but it
    ignores ``@unittest.skip`` on the class, runs no ``setUp``, and the class has no ``skipTest``
    (the test fails there, and so runs). A skip written in the body may thus skip (``pytest.skip``)
    or fail: undecided."""
    name, owner_file = test_class.ref.name, test_class.file
    plain = f"{name} is a plain pytest class, not a unittest.TestCase"
    infos = [(base, resolver.info(base)) for base in test_class.linearization]
    marked = [(base, info.skip) for base, info in infos if info and info.skip and not info.skip_by_unittest]
    class_skip = test_class.class_skip
    if class_skip is not None and class_skip[1].kind in (SkipKind.PYTESTMARK, SkipKind.MODULE):
        marked.append(class_skip)  # the module's mark or skip: marks of the class come first
    if marked:
        owner, skip = marked[0]
        return Outcome(Status.SKIPPED, skip, name, resolver.path_of(owner))
    if test_class.undecided is not None:
        return Outcome(Status.UNDECIDED, None, name, owner_file, undecided_because=test_class.undecided)
    owner, method = test_class.definitions[test_name]
    if method.skip is not None and method.skip.kind is SkipKind.DECORATOR:
        return Outcome(Status.SKIPPED, method.skip, name, resolver.path_of(owner))
    conditions = list(test_class.ran.conditions)
    found = method_skip(resolver, test_class, owner, method, conditions, set())
    undecidable = len(conditions) > len(test_class.ran.conditions)
    if (
        found is not None
        or undecidable
        or method.unread
        or (runtime and test_name in runtime.definitions.may_skip)
    ):
        because = f"{plain}: a skip in the test skips it (pytest.skip) or fails it (self.skipTest)"
        return Outcome(Status.UNDECIDED, None, name, owner_file, undecided_because=because)
    return test_class.ran


def _setup_outcome(resolver: Resolver, test_class: CollectedClass, test_name: str) -> Outcome | None:
    """The skip (or doubt) every test of the class meets before its body runs, or None."""
    if test_class.setup_skip is not None:
        where, skip = test_class.setup_skip
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    for where, by_name in test_class.setup_name_skips:
        if by_name.matches(test_name):
            skip = Skip(SkipKind.SETUP, by_name.reason, by_name.line)
            return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    if test_class.undecided is not None:
        because = test_class.undecided
        return Outcome(
            Status.UNDECIDED, None, test_class.ref.name, test_class.file, undecided_because=because
        )
    return None


def _expanded_outcome(
    resolver: Resolver,
    test_class: CollectedClass,
    test_name: str,
    runtime: RuntimeChecks | None,
    expanding: tuple[ClassRef, Method],
) -> Outcome:
    """A test whose cases ``parameterized.expand`` added: each case (overridden under its own name,
    or running the expanded body), and what is collected under the test's own name, as pytest runs
    them; skipped only when every one of them is."""
    owner, method = test_class.definitions[test_name]
    parts = _case_outcomes(resolver, test_class, test_name, runtime, expanding)
    if method.expansion is None:  # a plain override under the test's own name: collected, as written
        parts.append(_definition_outcome(resolver, test_class, test_name, runtime))
    elif method.expansion.base_skip is not None:
        skip = method.expansion.base_skip
        parts.append(Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(owner)))
    outcome = _combined_outcome(parts)
    if method.expansion is not None and method.expansion.base_runs and outcome.status is Status.SKIPPED:
        # pytest also runs what the mark left under the name, which passes doing nothing: a no-op,
        # skipped by design like a no-op override
        reason = (
            f"{test_name} itself is only a pytest mark over parameterized.expand's None and runs "
            f"nothing; its cases skip: {outcome.skip.reason}"
        )
        return replace(outcome, skip=replace(outcome.skip, kind=SkipKind.NOOP_OVERRIDE, reason=reason))
    return outcome


def _case_outcomes(
    resolver: Resolver,
    test_class: CollectedClass,
    test_name: str,
    runtime: RuntimeChecks | None,
    expanding: tuple[ClassRef, Method],
) -> list[Outcome]:
    """The outcome of each case of the expanded test: its override, or the expanded body."""
    as_expanded = replace(test_class, definitions={**test_class.definitions, test_name: expanding})
    cases = expanding[1].expansion.cases
    if cases is None and runtime is not None:  # a constant's parameters, computed from literals
        cases = runtime.case_names(resolver, expanding[0], test_name)
    if cases is not None:
        overridden = frozenset(number for number, case in enumerate(cases) if case in test_class.definitions)
        body = _definition_outcome(resolver, as_expanded, test_name, runtime, overridden)
        return [
            _definition_outcome(resolver, test_class, case, runtime) if number in overridden else body
            for number, case in enumerate(cases)
        ]
    # names the parameters do not give: overrides are recognised by their shape
    shape = re.compile(rf"{re.escape(test_name)}_(\d+)(?:_\w*)?")
    numbers = {name: int(found[1]) for name in test_class.definitions if (found := shape.fullmatch(name))}
    overrides = [_definition_outcome(resolver, test_class, name, runtime) for name in numbers]
    body = _definition_outcome(resolver, as_expanded, test_name, runtime, frozenset(numbers.values()))
    # cases are numbered from 0: a number missing below the highest overridden one is a case the body
    # runs; with none missing, further cases may or may not exist
    missing = set(range(max(numbers.values(), default=-1) + 1)) - set(numbers.values())
    if overrides and not missing and not any(outcome.status is Status.RAN for outcome in overrides):
        because = f"{test_class.ref.name} overrides cases of {test_name}, whose parameters are not literal"
        body = Outcome(
            Status.UNDECIDED, None, test_class.ref.name, test_class.file, undecided_because=because
        )
    return [body, *overrides]


def _combined_outcome(outcomes: list[Outcome]) -> Outcome:
    """Several runs of one test as one: ran when one ran, skipped when every one skipped, else
    undecided (the first skip, doubt or run stands for them, with every run's conditions)."""
    ran = [outcome for outcome in outcomes if outcome.status is Status.RAN]
    if not ran:  # skipped when every one skips; undecided when one might run
        undecided = [outcome for outcome in outcomes if outcome.status is Status.UNDECIDED]
        return undecided[0] if undecided else outcomes[0]
    if len(ran) == 1:  # its conditions are de-duplicated already; sharing it keeps one object per class
        return ran[0]
    conditions = tuple(dict.fromkeys(text for outcome in ran for text in outcome.conditions))
    return Outcome(Status.RAN, None, ran[0].test_class, ran[0].file, conditions)


def model_outcome(
    resolver: Resolver,
    classes: Iterable[CollectedClass],
    test_name: str,
    runtime: RuntimeChecks | None = None,
) -> Outcome:
    applying = [test_class for test_class in classes if test_name in test_class.applicable]
    outcomes = [
        with_class_placeholders(
            resolver,
            test_class.linearization,
            class_outcome(resolver, test_class, test_name, runtime),
            None if runtime is None else partial(runtime.first_model_class, resolver, test_class),
        )
        for test_class in applying
    ]
    if not outcomes:
        return NOT_APPLICABLE
    combined = _combined_outcome(outcomes)
    if len(outcomes) == 1:
        return combined
    parts = tuple(
        replace(outcome, class_file=test_class.file)
        for test_class, outcome in zip(applying, outcomes, strict=True)
    )
    return replace(combined, classes=parts)
