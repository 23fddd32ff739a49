"""Read the calls a class's ``__init__`` makes: the raw material of its module tree (``module_tree``).

Every call is kept with its callee as written (``nn.Linear``, ``LlamaDecoderLayer``,
``AutoModel.from_config``, ``super().__init__``) and whether it runs only under a condition. Which
callee builds a module, and which builds a model of the library, is decided later, with the whole
library at hand.
"""

from __future__ import annotations

import ast

from model_debugging.skips.parse.ast_nodes import dotted_name, dotted_text, self_attribute
from model_debugging.skips.parse.library.attribute_calls import registered_attribute, set_attribute
from model_debugging.skips.parse.library.class_choices import (
    bound_to_calls,
    bound_to_plain,
    class_aliases,
    classes_named,
    is_none,
    is_plain,
    written_callee,
)
from model_debugging.skips.parse.library.function_nodes import CHILD_FIELDS, FunctionNodes, kinds
from model_debugging.skips.parse.signatures import signature
from model_debugging.skips.records.library import OPAQUE_VALUE, PLAIN_VALUE, InitCall

_CONSTRUCTORS = ("from_config", "_from_config", "from_pretrained")
# The kinds of node the reading of a body tells apart, as sets of classes (a body has a quarter of
# a million nodes over the library: one set lookup each, not a chain of `isinstance`).
# Statements and expressions whose parts run only when a condition holds.
_CONDITIONAL = kinds(ast.If, ast.IfExp, ast.Try, ast.While, ast.BoolOp, ast.Match)
# Nodes with nothing below them that the reading looks at (names, literals, operators, contexts).
_LEAVES = kinds(ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
_FUNCTIONS = kinds(ast.FunctionDef, ast.AsyncFunctionDef)
_NOT_READ = kinds(ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = kinds(ast.comprehension)
_ASSIGNMENTS = kinds(ast.Assign, ast.AnnAssign)
_CALLS = kinds(ast.Call)
_LOOPS = kinds(ast.For, ast.AsyncFor)
_IFS = kinds(ast.If)


def read_init_calls(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    owner: ast.ClassDef | None,
    tables: dict[str, tuple[str, ...]],
    nodes: FunctionNodes | None = None,
) -> tuple[InitCall, ...]:
    """The calls in ``function``'s body, in source order (nested functions and lambdas are left out),
    with the assignments to ``self.<name>`` among them (see :class:`InitCall`).

    A call of another method of ``owner`` (``self._init_layers()``) is replaced by that method's own
    calls; ``tables`` are the file's module-level dicts of classes (``X_ATTENTION_CLASSES``), whose
    entries a call of ``TABLE[key](...)`` may build. ``owner`` is None for a module-level function.
    ``nodes`` are those of ``function`` when the caller has them.
    """
    methods = {
        item.name: item
        for item in (owner.body if owner is not None else ())
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    calls: list[InitCall] = []
    _BodyReader(function, (function.name,), methods, tables, calls, nodes).read(False)
    return tuple(calls)


class _BodyReader:
    """Reads one body into ``calls``: the constructor's, or that of a method it calls (inlined).

    A class rather than nested closures: closures that call each other form reference cycles, which
    kept each class's syntax tree alive until the next collection (millions of objects over the
    library, and a quarter of its reading time spent collecting them)."""

    def __init__(
        self,
        body: ast.FunctionDef | ast.AsyncFunctionDef,
        inlined: tuple[str, ...],
        methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
        tables: dict[str, tuple[str, ...]],
        calls: list[InitCall],
        nodes: FunctionNodes | None = None,
    ):
        self.body, self.inlined, self.methods, self.tables, self.calls = body, inlined, methods, tables, calls
        nodes = nodes if nodes is not None else FunctionNodes(body)  # walked once for the readings below
        self.aliases = class_aliases(nodes.of(ast.Assign), tables)
        self.values = bound_to_calls(nodes.of(ast.Assign))
        self.plain_names = bound_to_plain(body, nodes)
        self.local_functions = {
            node.name
            for kind in (ast.FunctionDef, ast.AsyncFunctionDef)
            for node in nodes.of(kind)
            if node is not body
        }
        self.targets: dict[int, str] = {}  # id of a call -> the attribute `self.<name> = <call>` binds
        self.conditions: dict[int, str] = {}  # id of a call -> the condition under which it is that value
        rebinds_config = _rebinds_config(nodes)
        # conditions are kept only where `config` is the constructor's own configuration parameter
        # (its first, and nothing rebinds it): a condition on `config` there reads the configuration
        # the instance is built with
        self.keeps_conditions = (
            not inlined[1:] and signature(body).positional[:1] == ("config",) and not rebinds_config
        )
        # `config` names the configuration the instance is built with, unless rebound here or a
        # parameter of an inlined method (which may be handed a part of it)
        self.config_is_own = not rebinds_config and not (
            inlined[1:] and "config" in signature(body, method=False).positional
        )
        # the constructor's own parameters, which a class may be passed for (not an inlined method's)
        self.own_parameters = set() if inlined[1:] else set(signature(body).names)

    def read(self, conditional: bool) -> None:
        for statement in self.body.body:
            self._visit(statement, conditional)

    def _visit(self, node: ast.AST, conditional: bool, looped: bool = False, condition: str = "") -> None:
        kind = node.__class__
        if kind in _FUNCTIONS and node is not self.body:
            for statement in node.body:  # a local function: what it calls, whenever it runs
                self._visit(statement, True, looped)
            return
        if kind in _NOT_READ:
            return
        if kind in _COMPREHENSIONS:
            conditional = conditional or bool(node.ifs)
        elif kind in _ASSIGNMENTS and node.value is not None:
            self._assignment(node, conditional or looped, condition)  # a loop's body may run no time
        elif kind in _CALLS:
            self._record(node, conditional)
        inner = conditional or kind in _CONDITIONAL
        looped = looped or kind in _LOOPS
        test = branch = None
        if kind in _IFS:
            test = node.test  # the test of an `if` always runs; only its branches are conditional
            if self.keeps_conditions and not (conditional or looped):
                branch = _branch_conditions(node)
        for name in CHILD_FIELDS[kind]:  # the children, in the order of `ast.iter_child_nodes`
            value = getattr(node, name, None)
            for child in value if value.__class__ is list else (value,):
                if child.__class__ in _LEAVES or not isinstance(child, ast.AST):
                    continue
                if child is test:
                    self._visit(child, conditional, looped)
                else:
                    self._visit(child, inner, looped, branch.get(id(child), "") if branch else "")

    def _assignment(self, node: ast.Assign | ast.AnnAssign, conditional: bool, condition: str = "") -> None:
        written = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [
            name
            for target in written
            for item in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
            if (name := self_attribute(item)) is not None
        ]
        unpacked = len(written) > 1 or not isinstance(written[0], ast.Attribute)
        if condition:  # a statement of one branch of `if <test>: ... else: ...`
            branches = None if unpacked else [(node.value, condition)]
        else:
            branches = None if unpacked or conditional or not self.keeps_conditions else _branches(node.value)
        for name in names:
            if branches is not None:  # `A(...) if <test> else B`: each value under its condition
                for value, condition in branches:
                    if isinstance(value, ast.Call):
                        self.targets[id(value)], self.conditions[id(value)] = name, condition
                    else:
                        kind = PLAIN_VALUE if is_plain(value) else OPAQUE_VALUE
                        self.calls.append(InitCall(kind, True, target=name, condition=condition))
                continue
            direct = [] if unpacked else _direct_calls(node.value)
            if direct:
                self.targets.update((id(call), name) for call in direct)
                if len(direct) == 1 and direct[0] is node.value:
                    continue
            plain = is_plain(node.value) or (
                isinstance(node.value, ast.Name) and node.value.id in self.plain_names
            )
            kind = PLAIN_VALUE if not unpacked and plain else OPAQUE_VALUE
            # the configuration itself (`self.config = config`) or one of its values (a dotted name:
            # any other value is not unparsed)
            source = dotted_name(node.value) if kind == PLAIN_VALUE and self.keeps_conditions else ""
            read_from_config = source.split(".")[0] == "config"
            self.calls.append(
                InitCall(
                    kind,
                    conditional or bool(direct),
                    argument=source if read_from_config else "",
                    target=name,
                )
            )

    def _record(self, node: ast.Call, conditional: bool) -> None:
        callee = written_callee(node.func)
        if callee in self.local_functions:
            return  # its own calls are read where it is defined
        method = callee.removeprefix("self.")
        target = self.targets.get(id(node), "")
        if callee.startswith("self.") and method in self.methods and method not in self.inlined:
            inlined = (*self.inlined, method)
            _BodyReader(self.methods[method], inlined, self.methods, self.tables, self.calls).read(
                conditional
            )
            if target:
                self.calls.append(InitCall(OPAQUE_VALUE, conditional, target=target))
            return
        argument = (
            node.args[0]
            if node.args
            else next((keyword.value for keyword in node.keywords if keyword.arg == "config"), None)
        )
        registered = registered_attribute(callee, node)
        if registered is not None:
            self.calls.append(registered)
        set_value = set_attribute(callee, node)
        if set_value is not None:  # setattr(self, name, value): like `self.<name> = value`
            name, value = set_value
            if isinstance(value, ast.Call):
                self.targets[id(value)] = name
            else:
                self.calls.append(
                    InitCall(PLAIN_VALUE if is_plain(value) else OPAQUE_VALUE, conditional, target=name)
                )
        owner_name, _, attribute = callee.partition(".")
        if (
            owner_name in self.values
            and attribute
            and "." not in attribute
            and attribute not in _CONSTRUCTORS
        ):
            callee = f"{owner_name}().{attribute}"  # a method of a value a call returned
        table = classes_named(node.func, self.tables) if isinstance(node.func, ast.Subscript) else None
        choices = self.aliases.get(callee) or table or (callee,)
        passed = dotted_text(argument) if argument is not None else ""
        if not self.config_is_own and passed.split(".")[0] == "config" and callee != "super().__init__":
            passed = ""  # not the instance's configuration: no choice is read from it
        classes = _passed_classes(node, self.aliases, self.tables)
        self.calls.extend(
            InitCall(
                callee=choice,
                conditional=conditional or len(choices) > 1,
                argument=passed,
                target=target,
                condition=self.conditions.get(id(node), "") if len(choices) == 1 else "",
                classes=classes,
                parameter=choice in self.own_parameters,
            )
            for choice in choices
        )


def read_function_calls(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    tables: dict[str, tuple[str, ...]],
    nodes: FunctionNodes | None = None,
) -> tuple[InitCall, ...]:
    """The calls a module-level function makes (what calling it may build)."""
    return read_init_calls(function, None, tables, nodes)


def _passed_classes(
    node: ast.Call, aliases: dict[str, tuple[str, ...]], tables: dict[str, tuple[str, ...]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The keywords of a call that may pass a class (``downsample=PatchMerging if c else None``,
    ``norm_layer=nn.LayerNorm``), each with the names it may be; None passes no class."""
    found = []
    for keyword in node.keywords:
        value = keyword.value
        if keyword.arg is None:
            continue
        if is_none(value):
            found.append((keyword.arg, ()))
            continue
        choices = classes_named(value, tables)
        if choices is not None:
            named = aliases.get(choices[0]) if len(choices) == 1 else None
            found.append((keyword.arg, named or choices))
    return tuple(found)


def _branch_conditions(node: ast.AST) -> dict[int, str]:
    """id of each statement directly in a branch of ``if <test>: ... else: ...`` (no ``elif``) ->
    the condition under which it runs."""
    if not isinstance(node, ast.If) or (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)):
        return {}
    test = ast.unparse(node.test)
    found = {id(statement): test for statement in node.body}
    found.update((id(statement), f"not ({test})") for statement in node.orelse)
    return found


def _rebinds_config(nodes: FunctionNodes) -> bool:
    """Whether a function (``nodes``: its nodes) assigns the name ``config`` (``config = config.tracker_config``)."""
    stored = [
        node for node in nodes.of(ast.Name) if node.id == "config" and not isinstance(node.ctx, ast.Load)
    ]
    if not stored:
        return False
    spared = _without_configuration(nodes.of(ast.If))
    return any(id(node) not in spared for node in stored)


def _without_configuration(statements: list[ast.If]) -> set[int]:
    """The nodes of ``if config is None:`` bodies (Musicgen's ``config = MusicgenConfig(...)`` from
    the models it is handed): they run only for an instance built without a configuration, which is
    never how the common tests, nor the constructors building a model from theirs, build one."""
    return {
        id(inner)
        for node in statements
        if _is_config_none(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }


def _is_config_none(test: ast.expr) -> bool:
    """``config is None``."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "config"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _branches(value: ast.expr) -> list[tuple[ast.expr, str]] | None:
    """``A if <test> else B`` (no branch itself a choice): [(A, "<test>"), (B, "not (<test>)")]."""
    if (
        not isinstance(value, ast.IfExp)
        or isinstance(value.body, ast.IfExp)
        or isinstance(value.orelse, ast.IfExp)
    ):
        return None
    test = ast.unparse(value.test)
    return [(value.body, test), (value.orelse, f"not ({test})")]


def _direct_calls(value: ast.expr) -> list[ast.Call]:
    """The calls whose result ``value`` is: itself, or the branches of ``A(...) if c else B(...)``."""
    if isinstance(value, ast.Call):
        return [value]
    if isinstance(value, ast.IfExp):
        return _direct_calls(value.body) + _direct_calls(value.orelse)
    return []
