"""Skip patterns, one small function each, over libcst nodes of a test method.

Each pattern carries snippets it must and must not flag (``MUST_FLAG`` / ``MUST_NOT_FLAG`` in
:data:`PATTERN_EXAMPLES`); ``tests/skips/test_patterns.py`` runs them. Names are canonicalised
through the file's imports first (``from unittest import skip as s`` makes ``s`` ``unittest.skip``).
Semantics follow pytest's ``skipping.py`` and unittest: any unconditional skip wins; ``skipIf`` /
``skipUnless`` / ``pytest.mark.skipif`` with a runtime condition is a condition, not a skip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from model_debugging.skips.records import (
    BoolOp,
    Condition,
    Equals,
    Flag,
    Guard,
    NonLiteral,
    Not,
    Skip,
    SkipKind,
)

UNCONDITIONAL_REASON = "unconditional skip"
NOOP_REASON = "no-op override"
SKIP_DECORATORS = {"unittest.skip", "unittest.case.skip", "pytest.mark.skip"}
SKIP_IF_DECORATORS = {"unittest.skipIf", "unittest.case.skipIf", "pytest.mark.skipif"}
SKIP_UNLESS_DECORATORS = {"unittest.skipUnless", "unittest.case.skipUnless"}
SKIP_CALLS = {"pytest.skip"}
SKIP_EXCEPTIONS = {"unittest.SkipTest", "unittest.case.SkipTest", "pytest.skip.Exception"}
_EMPTY_MODULE = cst.Module(body=[])


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


def literal_value(node: cst.BaseExpression) -> object:
    """The Python value of a literal node, or a :class:`NonLiteral` holding its code."""
    if isinstance(node, cst.Name) and node.value in {"True", "False", "None"}:
        return {"True": True, "False": False, "None": None}[node.value]
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
        inner = literal_value(node.expression)
        if not isinstance(inner, NonLiteral):
            return not inner
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        items = [literal_value(element.value) for element in node.elements]
        if not any(isinstance(item, NonLiteral) for item in items):
            return tuple(items) if isinstance(node, cst.Tuple) else list(items)
    if isinstance(node, cst.Dict) and not node.elements:
        return {}
    return NonLiteral(code(node))


def string_text(node: cst.BaseExpression) -> str:
    """The text of a reason: plain and concatenated strings evaluated, f-strings kept as written."""
    if isinstance(node, cst.SimpleString):
        return str(simple_string_value(node))
    if isinstance(node, cst.ConcatenatedString):
        return string_text(node.left) + string_text(node.right)
    if isinstance(node, cst.FormattedString):
        parts = []
        for part in node.parts:
            parts.append(part.value if isinstance(part, cst.FormattedStringText) else code(part))
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


def _condition_argument(args: Sequence[cst.Arg]) -> cst.BaseExpression | None:
    for arg in args:
        if arg.keyword is not None and arg.keyword.value == "condition":
            return arg.value
    positional = [arg for arg in args if arg.keyword is None and not arg.star]
    return positional[0].value if positional else None


def skip_decorator(decorator: cst.Decorator, aliases: Mapping[str, str], line: int) -> Skip | None:
    """``@unittest.skip(...)``, ``@pytest.mark.skip(...)`` or a skipIf/skipUnless with a literal condition."""
    target = decorator.decorator
    call = target if isinstance(target, cst.Call) else None
    name = canonical(dotted_name(call.func if call else target), aliases)
    args = call.args if call else ()
    if name in SKIP_DECORATORS:
        return Skip(SkipKind.DECORATOR, reason_of(args) or UNCONDITIONAL_REASON, line)
    if name in SKIP_IF_DECORATORS | SKIP_UNLESS_DECORATORS and call is not None:
        condition = _condition_argument(args)
        value = literal_value(condition) if condition is not None else NonLiteral("")
        if isinstance(value, NonLiteral):
            return None
        if bool(value) == (name in SKIP_IF_DECORATORS):
            return Skip(SkipKind.DECORATOR, reason_of(args, 1) or f"condition: {code(condition)}", line)
    return None


def condition_decorator(decorator: cst.Decorator, aliases: Mapping[str, str], line: int) -> Condition | None:
    """``@require_*``, ``@slow`` or a skipIf/skipUnless whose condition is only known at run time."""
    target = decorator.decorator
    call = target if isinstance(target, cst.Call) else None
    name = canonical(dotted_name(call.func if call else target), aliases)
    if name is None:
        return None
    last = name.rsplit(".", 1)[-1]
    if last.startswith("require_") or last == "slow":
        return Condition(code(target), line)
    if name in SKIP_IF_DECORATORS | SKIP_UNLESS_DECORATORS and call is not None:
        condition = _condition_argument(call.args)
        if condition is None or isinstance(literal_value(condition), NonLiteral):
            return Condition(code(target), line)
    return None


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


def body_skip(body: Sequence[cst.BaseStatement], aliases: Mapping[str, str], line: int) -> Skip | None:
    """A skip statement at the top level of the body: it runs whatever the class."""
    for statement in body:
        if _is_return(statement):
            return None
        reason = skip_statement(statement, aliases)
        if reason is not None:
            return Skip(SkipKind.BODY, reason, line)
    return None


def _is_return(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Return) for small in statement.body
    )


def delegated_calls(body: Sequence[cst.BaseStatement]) -> tuple[tuple[str, str], ...]:
    """``self.helper(...)`` and ``super().test_x(...)`` statements that always run (before any return).

    Their skips and guards are the caller's: a helper that calls ``self.skipTest`` skips the test.
    """
    calls = []
    for statement in body:
        if _is_return(statement):
            break
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
                continue
            func = small.value.func
            if not isinstance(func, cst.Attribute):
                continue
            owner = func.value
            if isinstance(owner, cst.Name) and owner.value == "self":
                calls.append(("self", func.attr.value))
            elif isinstance(owner, cst.Call) and dotted_name(owner.func) == "super" and not owner.args:
                calls.append(("super", func.attr.value))
    return tuple(calls)


def flag_expression(node: cst.BaseExpression) -> object | None:
    """Translate a condition made only of class flags into records, or None if it uses anything else."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = flag_expression(node.expression)
        return None if inner is None else Not(inner)
    if isinstance(node, cst.BooleanOperation):
        left, right = flag_expression(node.left), flag_expression(node.right)
        if left is None or right is None:
            return None
        operator = "and" if isinstance(node.operator, cst.And) else "or"
        return BoolOp(operator, (left, right))
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        target = node.comparisons[0]
        operand, value = flag_expression(node.left), literal_value(target.comparator)
        if operand is None or isinstance(value, NonLiteral):
            return None
        if isinstance(target.operator, (cst.Equal, cst.Is)):
            return Equals(operand, value)
        if isinstance(target.operator, (cst.NotEqual, cst.IsNot)):
            return Equals(operand, value, negated=True)
        return None
    name = dotted_name(node)
    if name is not None and name.startswith("self.") and name.count(".") <= 2:
        return Flag(tuple(name.split(".")[1:]))
    if isinstance(node, cst.Call) and dotted_name(node.func) == "getattr" and 2 <= len(node.args) <= 3:
        owner, attribute = dotted_name(node.args[0].value), literal_value(node.args[1].value)
        if owner not in {"self", "self.model_tester"} or not isinstance(attribute, str):
            return None
        path = (*owner.split(".")[1:], attribute)
        if len(node.args) == 3:
            default = literal_value(node.args[2].value)
            if isinstance(default, NonLiteral):
                return None
            return Flag(path, default, has_default=True)
        return Flag(path)
    return None


def guards(
    body: Sequence[cst.BaseStatement], aliases: Mapping[str, str], line: int
) -> tuple[tuple[Guard, ...], tuple[Condition, ...]]:
    """Top-level ``if <cond>: <skip>`` statements: flag guards, and runtime guards as conditions."""
    found_guards: list[Guard] = []
    conditions: list[Condition] = []
    for statement in body:
        if _is_return(statement):
            break
        if not isinstance(statement, cst.If) or not statement.body.body:
            continue
        reason = skip_statement(statement.body.body[0], aliases)
        if reason is None:
            continue
        expression = flag_expression(statement.test)
        text = code(statement.test)
        if expression is None:
            conditions.append(Condition(f"if {text}: skip", line))
        else:
            found_guards.append(Guard(expression, reason, line, text))
    return tuple(found_guards), tuple(conditions)


def _is_noop_statement(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Pass):
            continue
        if isinstance(small, cst.Return) and small.value is None:
            continue
        if isinstance(small, cst.Expr) and isinstance(
            small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)
        ):
            continue
        return False
    return True


def _comments(lines: Sequence[cst.EmptyLine]) -> list[str]:
    return [line.comment.value.lstrip("#").strip() for line in lines if line.comment is not None]


def noop_override(function: cst.FunctionDef, line: int) -> Skip | None:
    """A body of only ``pass`` / docstring / ``...`` / bare ``return``: the test does nothing.

    The reason is the docstring, else the comments in the body, else the comments above the ``def``,
    else the ``reason`` of its first decorator call (``@pytest.mark.xfail(reason=...)``).
    """
    block = function.body
    if not isinstance(block, cst.IndentedBlock):
        statements = [cst.SimpleStatementLine(body=list(block.body))]
    else:
        statements = list(block.body)
    if not statements or not all(_is_noop_statement(statement) for statement in statements):
        return None
    docstring = function.get_docstring(clean=True)
    if docstring:
        return Skip(SkipKind.NOOP_OVERRIDE, " ".join(docstring.split()), line)
    comments: list[str] = []
    if isinstance(block, cst.IndentedBlock):
        if block.header.comment is not None:
            comments.append(block.header.comment.value.lstrip("#").strip())
        for statement in statements:
            comments += _comments(statement.leading_lines)
            trailing = statement.trailing_whitespace.comment
            if trailing is not None:
                comments.append(trailing.value.lstrip("#").strip())
        comments += _comments(block.footer)
    if not comments:
        above = list(function.leading_lines)
        for decorator in function.decorators:
            above += list(decorator.leading_lines)
        comments = _comments(above)
    comments = [text for text in comments if text]
    if not comments:  # e.g. @pytest.mark.xfail(reason="...") over a `pass`
        calls = [decorator.decorator for decorator in function.decorators]
        comments = [reason_of(call.args) or "" for call in calls if isinstance(call, cst.Call)][:1]
        comments = [text for text in comments if text]
    return Skip(SkipKind.NOOP_OVERRIDE, " ".join(comments) if comments else NOOP_REASON, line)


# pattern name -> (kind it produces, snippets it must flag, snippets it must not flag)
PATTERN_EXAMPLES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "skip_decorator": (
        "decorator",
        (
            '@unittest.skip("no attention")\ndef test_x(self):\n    run()',
            '@unittest.skip(reason="a " "b")\ndef test_x(self):\n    run()',
            "@pytest.mark.skip\ndef test_x(self):\n    run()",
            '@pytest.mark.skip(reason=(\n    "multi"\n    " line"\n))\ndef test_x(self):\n    run()',
            '@skip("imported alias")\ndef test_x(self):\n    run()',
            '@unittest.skipIf(True, "always")\ndef test_x(self):\n    run()',
        ),
        (
            '@unittest.skipIf(torch.cuda.is_available(), "gpu")\ndef test_x(self):\n    run()',
            "@slow\ndef test_x(self):\n    run()",
            '@unittest.skipIf(False, "never")\ndef test_x(self):\n    run()',
        ),
    ),
    "body_skip": (
        "body",
        (
            'def test_x(self):\n    self.skipTest(reason="broken")',
            'def test_x(self):\n    """Doc."""\n    pytest.skip("broken")',
            'def test_x(self):\n    raise unittest.SkipTest("broken")',
        ),
        (
            'def test_x(self):\n    for m in self.all_model_classes:\n        self.skipTest("inside a loop")',
            'def test_x(self):\n    return\n    self.skipTest("unreachable")',
        ),
    ),
    "flag_guard": (
        "flag_guard",
        (
            'def test_x(self):\n    if not self.test_resize_embeddings:\n        self.skipTest(reason="off")\n    run()',
            'def test_x(self):\n    if not self.model_tester.is_training:\n        self.skipTest("no")\n    run()',
            'def test_x(self):\n    if not getattr(self.model_tester, "is_training", False):\n'
            '        self.skipTest("no")\n    run()',
        ),
        (
            'def test_x(self):\n    if not torch.cuda.is_available():\n        self.skipTest("gpu")\n    run()',
            'def test_x(self):\n    if not self.has_attentions:\n        print("no skip here")\n    run()',
        ),
    ),
    "noop_override": (
        "noop_override",
        (
            "def test_x(self):\n    pass",
            'def test_x(self):\n    """Not supported."""',
            "# Not supported\ndef test_x(self):\n    return",
        ),
        ("def test_x(self):\n    run()", "def test_x(self):\n    x = 1"),
    ),
}
