"""Follow a method's skips into the methods it calls (``self.helper()``, ``super().test_x()``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from model_debugging.skips.records.test_files import Method, NameSkip, Skip, SkipKind
from model_debugging.skips.resolve.classes import ClassRef, Resolver


class ResolvedClass(Protocol):
    """A class with its MRO and what each name resolves to in it."""

    linearization: tuple[ClassRef, ...]
    definitions: Mapping[str, tuple[ClassRef, Method]]


def method_skip(
    resolver: Resolver,
    test_class: ResolvedClass,
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
        target = called_method(resolver, test_class, owner, kind, name)
        if target is None or (target[0], name) in seen:
            continue
        found = method_skip(resolver, test_class, *target, conditions, seen)
        if found is not None and found[1].kind is not SkipKind.NOOP_OVERRIDE:  # calling a no-op is no skip
            return found
    return None


def name_skips(
    resolver: Resolver,
    test_class: ResolvedClass,
    owner: ClassRef,
    method: Method,
    seen: set[tuple[ClassRef, str]],
) -> Iterator[tuple[ClassRef, NameSkip]]:
    """The skips by test name ``method`` (defined in ``owner``) and the methods it calls take."""
    seen.add((owner, method.name))
    for skip in method.name_skips:
        yield owner, skip
    for kind, name in method.calls:
        target = called_method(resolver, test_class, owner, kind, name)
        if target is not None and (target[0], name) not in seen:
            yield from name_skips(resolver, test_class, *target, seen)


def called_method(
    resolver: Resolver, test_class: ResolvedClass, owner: ClassRef, kind: str, name: str
) -> tuple[ClassRef, Method] | None:
    """The method ``self.name`` / ``super().name`` / the function ``name`` (written in ``owner``)
    runs for this class; a function is one of ``owner``'s module or one it imports by name."""
    if kind == "self":
        return test_class.definitions.get(name)
    if kind == "module":
        return resolver.function(owner.module, name) if owner.module is not None else None
    linearization = test_class.linearization
    for ref in linearization[linearization.index(owner) + 1 :] if owner in linearization else ():
        info = resolver.info(ref)
        method = info.method(name) if info is not None else None
        if method is not None:
            return ref, method
    return None
