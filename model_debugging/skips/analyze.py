"""Decide, for every model and common test, whether pytest would run or skip it.

For each test class of a model (a ``unittest.TestCase`` in one of the model's test files), the
test applies when one of the classes defining it in the common files is in the class's MRO. The
definition the test resolves to is the first one in the MRO; it is skipped when the class (or a
base) carries a skip decorator, the definition is unconditionally skipped, or one of its flag
guards is true for this class — following the ``self.helper()`` and ``super().test_x()`` calls it
makes at its top level. A model skips a test when every applicable class skips it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from model_debugging.skips.records import Method, Skip, SkipKind
from model_debugging.skips.resolve import ClassRef, Resolver, module_name


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
    evaluated when it is undecided.
    """

    status: Status
    skip: Skip | None = None
    test_class: str | None = None
    file: str | None = None  # where the skip is written (the test class's file when it ran)
    conditions: tuple[str, ...] = ()
    undecided_because: str | None = None


NOT_APPLICABLE = Outcome(Status.NOT_APPLICABLE)
# Every model test class needs torch; listing it for every test of every model would drown the rest.
BASELINE_CONDITIONS = frozenset({"require_torch"})


@dataclass(frozen=True)
class CollectedClass:
    """A collected test class of a model, with what it resolves every test name to."""

    ref: ClassRef
    file: str
    line: int
    linearization: tuple[ClassRef, ...]
    class_skip: tuple[ClassRef, Skip] | None  # the class of the MRO carrying a skip decorator
    definitions: Mapping[str, tuple[ClassRef, Method]]
    applicable: frozenset[str]  # common tests defined by a class of the common files in the MRO
    ran: Outcome  # shared by every test this class runs without conditions


def collect_test_classes(
    resolver: Resolver, files: Iterable[str], tests: Mapping[str, tuple[str, frozenset[ClassRef]]]
) -> list[CollectedClass]:
    """The ``unittest.TestCase`` classes defined in ``files`` (the way pytest collects them).

    ``tests`` maps each common test name to ``(origin, classes of the common files defining it)``.
    """
    found = []
    for path in files:
        parsed = resolver.modules.get(module_name(path))
        if parsed is None:
            continue
        for info in parsed.classes:
            ref = ClassRef(module_name(path), info.name)
            mro = resolver.mro(ref)
            if not resolver.is_test_case(mro):
                continue
            class_skip = next(
                (
                    (base, resolver.info(base).skip)
                    for base in mro
                    if resolver.info(base) and resolver.info(base).skip
                ),
                None,
            )
            definitions: dict[str, tuple[ClassRef, Method]] = {}
            for base in reversed(mro):
                base_info = resolver.info(base)
                for method in base_info.methods if base_info else ():
                    definitions[method.name] = (base, method)
            bases = set(mro)
            applicable = frozenset(
                name for name in definitions if name in tests and not bases.isdisjoint(tests[name][1])
            )
            class_conditions = tuple(
                dict.fromkeys(
                    condition.text
                    for base in mro
                    if resolver.info(base) is not None
                    for condition in resolver.info(base).conditions
                    if condition.text not in BASELINE_CONDITIONS
                )
            )
            ran = Outcome(Status.RAN, None, info.name, path, class_conditions)
            found.append(CollectedClass(ref, path, info.line, mro, class_skip, definitions, applicable, ran))
    return found


def class_outcome(resolver: Resolver, test_class: CollectedClass, test_name: str) -> Outcome:
    """Run or skip for one class; the caller has checked that the test applies to it."""
    if test_class.class_skip is not None:
        owner, skip = test_class.class_skip
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(owner))
    owner, method = test_class.definitions[test_name]
    if method.skip is None and not method.guards and not method.conditions and not method.calls:
        return test_class.ran
    conditions = list(test_class.ran.conditions)
    found = _method_skip(resolver, test_class, owner, method, conditions, set())
    if found is not None:
        where, skip = found
        return Outcome(Status.SKIPPED, skip, test_class.ref.name, resolver.path_of(where))
    conditions = tuple(dict.fromkeys(conditions))
    if conditions == test_class.ran.conditions:  # the usual case: share the class's outcome, no new object
        return test_class.ran
    return Outcome(Status.RAN, None, test_class.ref.name, test_class.file, conditions)


def _method_skip(
    resolver: Resolver,
    test_class: CollectedClass,
    owner: ClassRef,
    method: Method,
    conditions: list[str],
    seen: set[tuple[ClassRef, str]],
) -> tuple[ClassRef, Skip] | None:
    """The skip ``method`` (defined in ``owner``) runs into for this class, following the calls it makes."""
    seen.add((owner, method.name))
    if method.skip is not None:
        return owner, method.skip
    conditions.extend(condition.text for condition in method.conditions)
    for guard in method.guards:
        verdict = resolver.evaluate(test_class.linearization, guard.condition)
        if verdict:
            return owner, Skip(SkipKind.FLAG_GUARD, guard.reason, guard.line)
        if verdict is None:
            conditions.append(f"if {guard.code}: skip (not decidable statically)")
    for kind, name in method.calls:
        target = _called(resolver, test_class, owner, kind, name)
        if target is None or (target[0], name) in seen:
            continue
        found = _method_skip(resolver, test_class, *target, conditions, seen)
        if found is not None and found[1].kind is not SkipKind.NOOP_OVERRIDE:  # calling a no-op is no skip
            return found
    return None


def _called(
    resolver: Resolver, test_class: CollectedClass, owner: ClassRef, kind: str, name: str
) -> tuple[ClassRef, Method] | None:
    """The method ``self.name`` / ``super().name`` (written in ``owner``) runs for this class."""
    if kind == "self":
        return test_class.definitions.get(name)
    linearization = test_class.linearization
    for ref in linearization[linearization.index(owner) + 1 :] if owner in linearization else ():
        info = resolver.info(ref)
        method = info.method(name) if info is not None else None
        if method is not None:
            return ref, method
    return None


def model_outcome(resolver: Resolver, classes: Iterable[CollectedClass], test_name: str) -> Outcome:
    outcomes = [
        class_outcome(resolver, test_class, test_name)
        for test_class in classes
        if test_name in test_class.applicable
    ]
    if not outcomes:
        return NOT_APPLICABLE
    ran = [outcome for outcome in outcomes if outcome.status is Status.RAN]
    if not ran:
        return outcomes[0]
    if len(ran) == 1:  # its conditions are de-duplicated already; sharing it keeps one object per class
        return ran[0]
    conditions = tuple(dict.fromkeys(text for outcome in ran for text in outcome.conditions))
    return Outcome(Status.RAN, None, ran[0].test_class, ran[0].file, conditions)
