"""What the methods of a tester class write on ``self``, read in one walk and kept on the class node
(a tester of a common file serves every model; a model's tester, each of its test classes)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

# Methods that change a container in place.
_MUTATING = frozenset(
    {"update", "pop", "popitem", "setdefault", "clear", "append", "extend", "insert", "remove"}
)


@dataclass(frozen=True)
class SelfWrites:
    """``stored``: the names of ``self.<name> = ...``; ``mutated``: the attributes changed in place
    (``self.x[k] = v``, ``del self.x[k]``, ``self.x.update(...)``, ``self.x |= ...``)."""

    stored: frozenset[str]
    mutated: frozenset[str]


def self_writes(node: ast.ClassDef) -> SelfWrites:
    found = getattr(node, "_self_writes", None)
    if found is None:
        found = _read(node)
        node._self_writes = found  # type: ignore[attr-defined]
    return found


def _read(node: ast.ClassDef) -> SelfWrites:
    stored, mutated = set(), set()
    for inner in ast.walk(node):
        target = None
        if isinstance(inner, ast.Attribute):
            if isinstance(inner.ctx, ast.Store) and _on_self(inner):
                stored.add(inner.attr)
        elif isinstance(inner, ast.Subscript):
            if isinstance(inner.ctx, (ast.Store, ast.Del)):
                target = inner.value
        elif isinstance(inner, ast.AugAssign):
            target = inner.target
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr in _MUTATING
        ):
            target = inner.func.value
        if isinstance(target, ast.Attribute) and _on_self(target):
            mutated.add(target.attr)
    return SelfWrites(frozenset(stored), frozenset(mutated))


def _on_self(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == "self"
