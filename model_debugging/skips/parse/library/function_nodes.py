"""The nodes of one function, sorted by kind in one walk.

Several readings look at a constructor's nodes (the names bound to classes, to computed or plain
values, the configuration rebound, what it sets on ``self``, the imports of a module-level
function); each looks at a few kinds only. Sorting the nodes once as the function is walked lets
each of them go through its kinds instead of walking every node again.
"""

from __future__ import annotations

import ast

_AST = ast.AST


def kinds(*bases: type) -> frozenset[type]:
    """``bases`` and every class derived from them: ``node.__class__ in kinds(...)`` is
    ``isinstance(node, bases)``, as one set lookup."""
    found: set[type] = set()
    pending = list(bases)
    while pending:
        kind = pending.pop()
        if kind not in found:
            found.add(kind)
            pending += kind.__subclasses__()
    return frozenset(found)


# The nodes no reading looks at: contexts and operators (`Load`, `Add`), shared by every name and
# expression, and a third of a constructor's nodes. A reading looks at `node.ctx` instead.
_UNREAD_FIELDS = ("ctx", "op", "ops")
# The fields of each kind of node that may hold nodes the readings look at.
CHILD_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(name for name in kind._fields if name not in _UNREAD_FIELDS) for kind in kinds(_AST)
}


class FunctionNodes:
    """Every node of ``function`` (itself included) but contexts and operators, by kind (the node's
    exact class), each kind in the (breadth-first) order of ``ast.walk``."""

    __slots__ = ("_by_kind",)

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef):
        by_kind: dict[type, list[ast.AST]] = {}
        queue: list[ast.AST] = [function]
        append = queue.append
        fields = CHILD_FIELDS
        for current in queue:  # grows while it is read, as in ast_nodes.walk
            kind = current.__class__
            found = by_kind.get(kind)
            if found is None:
                by_kind[kind] = [current]
            else:
                found.append(current)
            for name in fields[kind]:
                value = getattr(current, name, None)
                if isinstance(value, _AST):
                    append(value)
                elif value.__class__ is list:
                    for item in value:
                        if isinstance(item, _AST):
                            append(item)
        self._by_kind = by_kind

    def of(self, kind: type) -> list:
        """The nodes whose class is ``kind`` (not a subclass), in walk order (a list not to change)."""
        return self._by_kind.get(kind, [])
