"""Which statements of a body always run, in order: a skip among them skips whoever runs the body.

A statement at the top of the body always runs until one of them may end it: a ``return``, or a
block holding one (``if self.supports_it: return super().test_x()``, after which the rest runs
only when the condition is false). The body of a ``with`` block runs too, and so does that of a
``try`` whose handlers cannot catch a skip (``SkipTest`` derives from ``Exception``: only a bare
``except``, ``Exception``, ``BaseException`` or a skip exception catches it), unless a ``finally``
returns. A ``with`` whose context manager catches exceptions (``self.assertRaises(...)``,
``pytest.raises(...)``, ``contextlib.suppress(...)``) catches a skip the same way, and so may a
``subTest`` block; other context managers are read as letting exceptions through.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping, Sequence

import libcst as cst

from model_debugging.skips.parse.rules.nodes import (
    SKIP_CALLS,
    SKIP_EXCEPTIONS,
    canonical,
    dotted_name,
    reason_of,
)
from model_debugging.skips.records.test_files import UNCONDITIONAL_REASON

# handler types a SkipTest is an instance of
_CATCH_ALL = frozenset({"Exception", "BaseException"})
# context managers that catch the exceptions their arguments name
_CATCHING_CONTEXTS = frozenset({"assertRaises", "assertRaisesRegex", "raises", "suppress"})
_BUILTIN_EXCEPTIONS = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)
)


def _catches_type(node: cst.BaseExpression, aliases: Mapping[str, str]) -> bool | None:
    """Whether an exception type catches a skip: True, False, or None when the type is not known."""
    if isinstance(node, cst.Tuple):
        found = [_catches_type(element.value, aliases) for element in node.elements]
        return True if True in found else (None if None in found else False)
    name = canonical(dotted_name(node), aliases)
    if name is None:
        return None
    if name in _CATCH_ALL or name in SKIP_EXCEPTIONS or name.endswith(("SkipTest", "Skipped")):
        return True
    return False if name in _BUILTIN_EXCEPTIONS else None


def catches_skip(node: cst.With | cst.Try, aliases: Mapping[str, str]) -> bool | None:
    """Whether the block catches a skip raised in its body: True, False, or None when it may."""
    if isinstance(node, cst.Try):
        found = [
            True if handler.type is None else _catches_type(handler.type, aliases)
            for handler in node.handlers
        ]
    else:
        found = []
        for item in node.items:
            call = item.item if isinstance(item.item, cst.Call) else None
            name = dotted_name(call.func) if call is not None else None
            last = name.rsplit(".", 1)[-1] if name else ""
            if last == "subTest":
                found.append(None)
            elif last in _CATCHING_CONTEXTS:
                types = [arg.value for arg in call.args if arg.keyword is None][
                    : 1 if last != "suppress" else None
                ]
                found += [_catches_type(value, aliases) for value in types] or [None]
    return True if True in found else (None if None in found else False)


def may_return(node: cst.CSTNode) -> bool:
    """Whether a statement (or a block, a handler) holds a ``return`` of the function it is written
    in; only statements are walked (a ``return`` is one), not those of a function defined inside."""
    if isinstance(node, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Return) for small in node.body)
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(node, cst.BaseSuite):
        return any(may_return(statement) for statement in _block(node))
    parts = [getattr(node, name, None) for name in ("body", "orelse", "finalbody")]
    parts += [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]
    return any(may_return(part) for part in parts if isinstance(part, cst.CSTNode))


def _block(node: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    return node.body if isinstance(node, cst.IndentedBlock) else [cst.SimpleStatementLine(body=node.body)]


def skip_statement(statement: cst.BaseStatement, aliases: Mapping[str, str]) -> str | None:
    """The reason if ``statement`` is ``self.skipTest(...)``, ``pytest.skip(...)`` or ``raise SkipTest(...)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or not statement.body:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        name = dotted_name(call.func)
        if name == "self.skipTest" or canonical(name, aliases) in SKIP_CALLS:
            return reason_of(call.args) or UNCONDITIONAL_REASON
    if isinstance(small, cst.Raise) and small.exc is not None:
        exc = small.exc
        call = exc if isinstance(exc, cst.Call) else None
        name = canonical(dotted_name(call.func if call else exc), aliases)
        if name in SKIP_EXCEPTIONS or (name or "").endswith("SkipTest"):
            return (reason_of(call.args) if call else None) or UNCONDITIONAL_REASON
    return None


def holds_skip(node: cst.CSTNode, aliases: Mapping[str, str]) -> bool:
    """Whether a skip statement is written anywhere in the statement's blocks."""
    if isinstance(node, cst.SimpleStatementLine):
        return skip_statement(node, aliases) is not None
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(node, cst.BaseSuite):
        return any(holds_skip(statement, aliases) for statement in _block(node))
    parts = [getattr(node, name, None) for name in ("body", "orelse", "finalbody")]
    parts += [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]
    return any(holds_skip(part, aliases) for part in parts if isinstance(part, cst.CSTNode))


def is_guard(statement: cst.BaseStatement, aliases: Mapping[str, str]) -> bool:
    """``if <cond>:`` whose first statement skips (the guard rules read its condition)."""
    return (
        isinstance(statement, cst.If)
        and bool(statement.body.body)
        and skip_statement(statement.body.body[0], aliases) is not None
    )


def reached(body: Sequence[cst.BaseStatement], aliases: Mapping[str, str]) -> Iterator[cst.BaseStatement]:
    """The statements of ``body`` that run whenever it runs, in order (see the module docstring).

    A ``with`` or ``try`` whose body it descends into is not yielded itself; a block it does not
    descend into is, when it cannot end the function.
    """
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield statement
            if any(isinstance(small, cst.Return) for small in statement.body):
                return
        elif isinstance(statement, (cst.With, cst.Try)) and catches_skip(statement, aliases) is False:
            after = []
            if isinstance(statement, cst.Try):
                if statement.finalbody is not None and may_return(statement.finalbody):
                    return  # a return in `finally` swallows whatever the body raised
                after = [*statement.handlers, *filter(None, [statement.orelse, statement.finalbody])]
            yield from reached(_block(statement.body), aliases)
            if may_return(statement.body) or any(may_return(part) for part in after):
                return
        elif is_guard(statement, aliases):
            yield statement  # its body ends in the skip, whatever follows it there
            if statement.orelse is not None and may_return(statement.orelse):
                return
        elif may_return(statement):
            return
        else:
            yield statement
