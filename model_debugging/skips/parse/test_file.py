"""Parse one Python file with libcst into a :class:`~model_debugging.skips.records.test_files.ParsedFile`.

Only module-level classes and imports are read (also inside top-level ``if``/``try`` blocks such as
``if is_torch_available():``). Line numbers come from a scan of the source text for ``class`` and
``def`` lines: libcst's ``PositionProvider`` costs twice the parse itself on large files.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

import libcst as cst

from model_debugging.skips.parse import module_level as collection
from model_debugging.skips.parse.elide import Elided, elide_unread_code
from model_debugging.skips.parse.expansion import read_expansion
from model_debugging.skips.parse.init_defaults import class_init_defaults, init_defaults
from model_debugging.skips.parse.module_import import first_line, import_outcome
from model_debugging.skips.parse.module_names import names_bound_once
from model_debugging.skips.parse.rules import (
    BodySkip,
    ConditionDecorator,
    Context,
    DelegatedCalls,
    FlagGuard,
    NoopOverride,
    RuntimeGuard,
    SkipDecorator,
    TestNameSkip,
)
from model_debugging.skips.parse.rules.nodes import code, decorator_call, dotted_name, literal_value
from model_debugging.skips.parse.rules.skip_decorator import decorator_skip
from model_debugging.skips.records.literals import LiteralValue
from model_debugging.skips.records.test_files import (
    STAR,
    ClassInfo,
    Import,
    Method,
    ParsedFile,
    ParseError,
    Skip,
    SkipKind,
    TesterCall,
)
from model_debugging.skips.source.files import MAX_FILE_BYTES, decode_source

_DEFINITION_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.MULTILINE)


class _Lines:
    """Where each ``class``/``def`` name is defined: name -> [(line, indent)] in source order."""

    def __init__(self, source: str):
        self.source = source
        self.by_name: dict[str, list[tuple[int, int]]] = {}
        for match in _DEFINITION_LINE.finditer(source):
            line = source.count("\n", 0, match.start()) + 1
            self.by_name.setdefault(match.group(3), []).append((line, len(match.group(1))))

    def search(self, pattern: str, after: int = 0) -> int:
        """The line of the first match of ``pattern`` (a multi-line regex) below line ``after``, or 0."""
        start = 0
        for _ in range(after):
            start = self.source.find("\n", start) + 1
            if start == 0:
                return 0
        match = re.compile(pattern, re.MULTILINE).search(self.source, start)
        return 0 if match is None else self.source.count("\n", 0, match.start()) + 1

    def rebinding(self, owner: str, attribute: str) -> int:
        """The line of ``owner.attribute = ...`` or ``setattr(owner, "attribute", ...)`` at module level."""
        owner, attribute = re.escape(owner), re.escape(attribute)
        return self.search(rf"^(?:{owner}\.{attribute}\s*=|setattr\(\s*{owner}\s*,\s*[\"']{attribute}[\"'])")

    def find(self, name: str, after: int = 0, max_indent: int | None = None, min_indent: int = 0) -> int:
        for line, indent in self.by_name.get(name, ()):
            if line > after and indent >= min_indent and (max_indent is None or indent <= max_indent):
                return line
        return after


def _flatten(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """Statements of a block, descending into ``if`` (its first branch) and ``try`` bodies."""
    for statement in statements:
        if isinstance(statement, (cst.If, cst.Try)):
            yield from _flatten(statement.body.body)
        else:
            yield statement


def _imports(statement: cst.BaseStatement) -> Iterator[Import]:
    if not isinstance(statement, cst.SimpleStatementLine):
        return
    for small in statement.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                module = dotted_name(alias.name) or ""
                if alias.asname is not None:
                    yield Import(dotted_name(alias.asname.name) or module, module, None)
                else:
                    head = module.split(".")[0]
                    yield Import(head, head, None)
        elif isinstance(small, cst.ImportFrom):
            module = dotted_name(small.module) if small.module is not None else ""
            if isinstance(small.names, cst.ImportStar):  # every public name of the module
                yield Import(STAR, module or "", STAR, len(small.relative))
                continue
            for alias in small.names:
                name = dotted_name(alias.name) or ""
                local = dotted_name(alias.asname.name) if alias.asname is not None else name
                yield Import(local or name, module or "", name, len(small.relative))


def _aliases(imports: Sequence[Import]) -> dict[str, str]:
    """local name -> dotted name it stands for (absolute imports only; enough for unittest/pytest)."""
    aliases = {}
    for item in imports:
        if item.level == 0 and item.name != STAR:
            aliases[item.local] = item.module if item.name is None else f"{item.module}.{item.name}"
    return aliases


def _assigned_attributes(body: Sequence[cst.BaseStatement]) -> list[tuple[str, object]]:
    attributes = []
    for statement in _flatten(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign):
                value = literal_value(small.value)
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        attributes.append((target.target.value, value))
            elif (
                isinstance(small, cst.AnnAssign)
                and small.value is not None
                and isinstance(small.target, cst.Name)
            ):
                attributes.append((small.target.value, literal_value(small.value)))
    return attributes


def _self_assignments(function: cst.FunctionDef) -> Iterator[tuple[str, cst.BaseExpression]]:
    for statement in _flatten(function.body.body) if isinstance(function.body, cst.IndentedBlock) else ():
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    name = dotted_name(target.target)
                    if name and name.startswith("self.") and name.count(".") == 1:
                        yield name[5:], small.value
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                yield "", small.value


def _tester_call(function: cst.FunctionDef) -> TesterCall | None:
    for name, value in _self_assignments(function):
        if name == "model_tester" and isinstance(value, cst.Call):
            callee = dotted_name(value.func)
            if callee is None:
                return None
            keywords = tuple(
                (arg.keyword.value, literal_value(arg.value)) for arg in value.args if arg.keyword
            )
            return TesterCall(callee, keywords)
    return None


def _method(function: cst.FunctionDef, module: Context, line: int, helper: bool = False) -> Method:
    """A method's record (``helper``: a function of the module, read as a helper whatever its name)."""
    name = function.name.value
    context = replace(module, line=line)
    calls = DelegatedCalls.check(function, context)
    guards = FlagGuard.check(function, context)
    guard_conditions = RuntimeGuard.check(function, context)
    if helper or not name.startswith("test"):  # only what skips whoever calls it (a no-op does not)
        skip = SkipDecorator.check(function, context) or BodySkip.check(function, context)
        name_skips = TestNameSkip.check(function, context)
        return Method(name, line, skip, guards, guard_conditions, calls, name_skips)
    expansion, case = read_expansion(function, context)  # each case runs under the decorators below expand
    skip = (
        SkipDecorator.check(case, context)
        or BodySkip.check(case, context)
        or NoopOverride.check(case, context)
    )
    conditions = ConditionDecorator.check(case, context)
    return Method(name, line, skip, guards, conditions + guard_conditions, calls, expansion=expansion)


def _class(
    node: cst.ClassDef, module: Context, lines: _Lines, line: int, python: ast.ClassDef | None
) -> ClassInfo:
    """The record of a class; ``python``: the same class in Python's tree of the file, which its
    constructor's defaults are read from (when Python could parse the file)."""
    bases = tuple(dotted_name(arg.value) or code(arg.value) for arg in node.bases)
    context = replace(module, line=line)
    found = SkipDecorator.check(node, context)
    skip = None if found is None else Skip(SkipKind.CLASS_DECORATOR, found.reason, line)
    skipping = [item for item in node.decorators if decorator_skip(item, context) is not None][:1]
    by_unittest = any(
        not (decorator_call(item, context.aliases, context.names)[0] or "").startswith("pytest.")
        for item in skipping
    )
    conditions = ConditionDecorator.check(node, context)
    statements = list(_flatten(node.body.body if isinstance(node.body, cst.IndentedBlock) else ()))
    marked, mark_conditions = collection.pytestmark(statements, context)
    skip, conditions = skip or marked, conditions + mark_conditions
    shadowing, deleted, bound = collection.class_bindings(statements, context)
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    methods, tester_call, defaults = [], None, ()
    for name, function in bound:  # test_x = lambda self: ..., test_x = test_y, test_x = <not read>
        method_line = lines.search(rf"^[ \t]+{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)", after=line) or line
        if isinstance(function, str):
            unread = f"{name} is bound in the class body to `{function}`, which is not read"
            methods.append(Method(name, method_line, unread=unread))
        else:
            methods.append(_method(function, module, method_line))
    for statement in _flatten(body):
        if isinstance(statement, cst.FunctionDef):
            method_line = lines.find(statement.name.value, after=line, min_indent=1)
            methods.append(_method(statement, module, method_line))
            if statement.name.value == "setUp":
                tester_call = _tester_call(statement)
            elif statement.name.value == "__init__":
                defaults = (
                    class_init_defaults(python, lines.source)
                    if python
                    else _rendered_init_defaults(statement)
                )
    return ClassInfo(
        name=node.name.value,
        line=line,
        bases=bases,
        attributes=tuple(_assigned_attributes(body)),
        methods=tuple(methods),
        skip=skip,
        conditions=tuple(conditions),
        tester_call=tester_call,
        init_defaults=defaults,
        shadowing=shadowing,
        deleted=deleted,
        skip_by_unittest=by_unittest,
    )


def _rendered_init_defaults(function: cst.FunctionDef) -> tuple[tuple[str, LiteralValue], ...]:
    """The defaults of an ``__init__`` in a file Python cannot parse (newer syntax than its own),
    read from the function's own text: none if Python cannot parse that either."""
    text = cst.Module(body=[function]).code
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    return init_defaults(tree.body[0], text)


def _python_classes(statements: Sequence[ast.stmt]) -> Iterator[ast.ClassDef]:
    """The classes ``_flatten`` finds, in Python's tree: those of the block, of the first branch of
    an ``if`` and of a ``try``."""
    for statement in statements:
        if isinstance(statement, ast.If | ast.Try):
            yield from _python_classes(statement.body)
        elif isinstance(statement, ast.ClassDef):
            yield statement


def _syntax_error(source: str, path: str, error: cst.ParserSyntaxError) -> ParseError:
    """Python's own message and line when it agrees the file is invalid (libcst points past the error)."""
    try:
        compile(source, path, "exec", flags=ast.PyCF_ONLY_AST)
    except SyntaxError as python_error:
        return ParseError(path, python_error.lineno or 1, f"syntax error: {python_error.msg}")
    return ParseError(path, error.editor_line, f"syntax error: {error.message}")


def _python_tree(source: str, path: str) -> tuple[ast.Module | None, ParseError | None]:
    """Python's own parse first: its tree serves ``elide``, and it rejects what would crash libcst.

    A few thousand nested brackets or unary operators make libcst's native parser overflow its
    stack (a segfault that takes the whole scan down); Python's parser rejects them long before.
    Other syntax errors are left to libcst, which reports them.
    """
    try:
        return ast.parse(source, path), None
    except (RecursionError, MemoryError) as error:
        return None, ParseError(path, 1, f"too deeply nested to parse ({type(error).__name__})")
    except SyntaxError as error:
        if error.msg.startswith("too many"):  # nested parentheses, levels of indentation, ...
            return None, ParseError(path, error.lineno or 1, f"syntax error: {error.msg}")
    except ValueError:  # e.g. a NUL byte; libcst reports it
        pass
    return None, None


def parse_source(source: str, path: str, *, elide: bool = False, test: str | None = None) -> ParsedFile:
    """Parse ``source`` (the text of ``path``, relative to the repository) into records.

    With ``elide``, code the scanner never reads is not parsed (see ``parse/elide.py``); with
    ``test``, the tests a verdict on that test never reads (``parse/other_tests.py``).
    """
    tree, too_deep = _python_tree(source, path)
    if too_deep is not None:
        return ParsedFile(path, error=too_deep)
    if tree is not None and (elide or test is not None):
        elided = elide_unread_code(source, tree, unread=elide, test=test)
    else:  # no test left out: the store reads what the file names from its text
        elided = Elided(source)
    try:
        module = cst.parse_module(elided.text)
    except cst.ParserSyntaxError as error:
        if elided.text is not source:  # never let the shortcut cost a file: parse it whole
            return parse_source(source, path, elide=False)
        return ParsedFile(path, error=_syntax_error(source, path, error))
    lines = _Lines(source)
    imports: list[Import] = []
    statements = list(_flatten(module.body))
    for statement in statements:
        imports.extend(_imports(statement))
    context = Context(_aliases(imports), 1, names_bound_once(module, source, tree))
    classes, functions, helpers = [], [], []
    python_classes = _python_classes(tree.body) if tree is not None else None
    for statement in statements:
        if isinstance(statement, cst.ClassDef):
            line = lines.find(statement.name.value, max_indent=8)
            info = _class(statement, context, lines, line, next(python_classes) if python_classes else None)
            classes.append(replace(info, elided=True) if info.name in elided.classes else info)
        elif isinstance(statement, cst.FunctionDef):
            if statement.name.value.startswith("test_"):
                functions.append(statement.name.value)
            line = lines.find(statement.name.value, max_indent=8)
            helpers.append(_method(statement, context, line, helper=True))
    classes = collection.module_level_classes(
        statements,
        classes,
        context,
        lambda function, line: _method(function, context, line),
        lines.rebinding,
    )
    module_skip, module_conditions = collection.pytestmark(statements, context)
    import_skip, import_error, import_conditions = import_outcome(
        module.body, context, path, lambda node: _line_of(lines, node)
    )
    return ParsedFile(
        path,
        tuple(imports),
        tuple(classes),
        tuple(functions),
        None,
        module_skip,
        module_conditions + import_conditions,
        tuple(helpers),
        import_skip,
        import_error,
        elided.tests,
        elided.named,
    )


def _line_of(lines: _Lines, node: cst.CSTNode) -> int:
    """The line of a module-level statement, found by its first line of text (1 if not found)."""
    if isinstance(node, cst.ClassDef):
        return lines.find(node.name.value, max_indent=8) or 1
    return lines.search(rf"^[ \t]*{re.escape(first_line(node))}") or 1


def parse_bytes(data: bytes, path: str, elide: bool = False, test: str | None = None) -> ParsedFile:
    """Decode (as Python does) and parse; a huge or undecodable file becomes a :class:`ParseError` record."""
    if len(data) > MAX_FILE_BYTES:
        return ParsedFile(
            path, error=ParseError(path, 1, f"file too large (more than {MAX_FILE_BYTES} bytes)")
        )
    source, refusal = decode_source(data, path)
    if refusal is not None:
        line, message = refusal
        return ParsedFile(path, error=ParseError(path, line, f"cannot decode: {message}"))
    return parse_source(source, path, elide=elide, test=test)


__all__ = ["parse_bytes", "parse_source"]
