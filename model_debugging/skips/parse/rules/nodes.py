"""libcst helpers every rule shares: names through the file's imports, literal values, reasons.

Names are canonicalised through the file's imports first (``from unittest import skip as s`` makes
``s`` ``unittest.skip``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import libcst as cst

from model_debugging.skips.records.literals import LiteralValue, NonLiteral, unevaluated

NOOP_REASON = "no-op override"
SKIP_DECORATORS = {"unittest.skip", "unittest.case.skip", "pytest.mark.skip"}
SKIP_IF_DECORATORS = {"unittest.skipIf", "unittest.case.skipIf", "pytest.mark.skipif"}
SKIP_UNLESS_DECORATORS = {"unittest.skipUnless", "unittest.case.skipUnless"}
SKIP_CALLS = {"pytest.skip"}
SKIP_EXCEPTIONS = {"unittest.SkipTest", "unittest.case.SkipTest", "pytest.skip.Exception"}
_EMPTY_MODULE = cst.Module(body=[])
NO_NAMES: Mapping[str, cst.BaseExpression] = MappingProxyType({})


def code(node: cst.CSTNode) -> str:
    return _EMPTY_MODULE.code_for_node(node).strip()


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def canonical(name: str | None, aliases: Mapping[str, str]) -> str | None:
    """Replace the first component of ``name`` by what the file imported it as."""
    if name is None:
        return None
    head, _, rest = name.partition(".")
    full = aliases.get(head, head)
    return f"{full}.{rest}" if rest else full


def simple_string_value(node: cst.SimpleString) -> str | bytes:
    """``evaluated_value`` without its ``ast.literal_eval`` call for plain strings (no prefix, no escapes)."""
    text = node.value
    if text[0] in "'\"" and "\\" not in text:
        quote = 3 if text[:3] in ('"""', "'''") else 1
        return text[quote:-quote]
    return node.evaluated_value


def literal_value(
    node: cst.BaseExpression, names: Mapping[str, cst.BaseExpression] = NO_NAMES
) -> LiteralValue:
    """The Python value of a literal node, or a :class:`NonLiteral` holding its code.

    A name the module binds once to a literal (``names``, see ``parse/module_names.py``) has its value.
    """
    if isinstance(node, cst.Name) and node.value in {"True", "False", "None"}:
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Name) and node.value in names:
        value = literal_value(names[node.value])
        return NonLiteral(node.value) if isinstance(value, NonLiteral) else value
    if isinstance(node, cst.SimpleString):
        return simple_string_value(node)
    if isinstance(node, cst.ConcatenatedString):
        value = node.evaluated_value
        if isinstance(value, (str, bytes)):
            return value
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal_value(node.expression)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = literal_value(node.expression, names)
        if not isinstance(inner, NonLiteral):
            return not inner
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        items = [literal_value(element.value) for element in node.elements]
        if not any(isinstance(item, NonLiteral) for item in items):
            return tuple(items) if isinstance(node, cst.Tuple) else list(items)
    if isinstance(node, cst.Dict) and not node.elements:
        return {}
    return NonLiteral(code(node))


def _placeholder_text(part: cst.FormattedStringExpression) -> str:
    """A literal placeholder evaluated (conversion and format spec applied); anything else marked."""
    value = literal_value(part.expression)
    static_spec = part.format_spec is None or all(
        isinstance(item, cst.FormattedStringText) for item in part.format_spec
    )
    if isinstance(value, NonLiteral) or not static_spec:
        return unevaluated(code(part.expression))
    if part.conversion == "r":
        value = repr(value)
    elif part.conversion in ("s", "a"):
        value = str(value) if part.conversion == "s" else ascii(value)
    spec = "".join(item.value for item in part.format_spec or ())
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        return unevaluated(code(part.expression))


def string_text(node: cst.BaseExpression) -> str:
    """The text of a reason: plain and concatenated strings evaluated; in an f-string, literal
    placeholders evaluated and the others shown as ``<unevaluated: expression>``."""
    if isinstance(node, cst.SimpleString):
        return str(simple_string_value(node))
    if isinstance(node, cst.ConcatenatedString):
        return string_text(node.left) + string_text(node.right)
    if isinstance(node, cst.FormattedString):
        parts = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value.replace("{{", "{").replace("}}", "}"))
            else:
                parts.append(_placeholder_text(part))
        return "".join(parts)
    return code(node)


def reason_of(args: Sequence[cst.Arg], position: int = 0) -> str | None:
    """The ``reason=`` keyword, else the positional argument at ``position``."""
    for arg in args:
        if arg.keyword is not None and arg.keyword.value in {"reason", "msg"}:
            return string_text(arg.value)
    positional = [arg for arg in args if arg.keyword is None and not arg.star]
    if len(positional) > position:
        return string_text(positional[position].value)
    return None


def condition_argument(args: Sequence[cst.Arg]) -> cst.BaseExpression | None:
    for arg in args:
        if arg.keyword is not None and arg.keyword.value == "condition":
            return arg.value
    positional = [arg for arg in args if arg.keyword is None and not arg.star]
    return positional[0].value if positional else None


def is_return(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Return) for small in statement.body
    )


def decorator_call(
    decorator: cst.Decorator, aliases: Mapping[str, str], names: Mapping[str, cst.BaseExpression] = NO_NAMES
) -> tuple[str | None, cst.Call | None]:
    """The canonical name of a decorator and its call node (None for ``@name`` without arguments).

    A name the module binds once (``names``) stands for its expression: ``@skip_me`` after
    ``skip_me = unittest.skip("r")``, or ``@skip("r")`` after ``skip = unittest.skip``.
    """
    target = decorator.decorator
    if isinstance(target, cst.Name) and target.value in names:
        target = names[target.value]
    call = target if isinstance(target, cst.Call) else None
    func = call.func if call else target
    if isinstance(func, cst.Name) and dotted_name(names.get(func.value, func)) is not None:
        func = names.get(func.value, func)
    return canonical(dotted_name(func), aliases), call
