"""Run a common test's body on symbolic values, statement by statement, to the first skip it meets.

Control flow follows Python's: a ``for`` over known model classes runs once per class (a skip in
the loop ends the whole test at the first class that triggers it), a branch whose condition is
known is the only one run. Where a condition is unknown, both branches run: if only one of them
skips, the test is undecided; if one ends the test (a ``return``, ``break``, ``raise``) and the
other goes on, a skip met later is undecided too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from model_debugging.skips.interp.effects import (
    Effects,
    alias_names,
    effects,
    mutated_name,
    mutated_names,
    relevant_names,
)
from model_debugging.skips.interp.expressions import Evaluator, TestCode, augmented
from model_debugging.skips.interp.handed import handed_back
from model_debugging.skips.interp.iteration import loop_items, run_loop
from model_debugging.skips.interp.join import merge_branches
from model_debugging.skips.interp.outcome import Doubt, Exit, RuntimeVerdict, SkipSignal, Undecided
from model_debugging.skips.interp.parameters import MAX_DEPTH, bind_parameters
from model_debugging.skips.interp.truth import Truth, text, truth_of
from model_debugging.skips.interp.unpacking import bindings
from model_debugging.skips.interp.values import CHANGEABLE, Config, Raised, Skipped, Unknown

_SKIP_EXCEPTIONS = {"SkipTest", "unittest.SkipTest", "unittest.case.SkipTest"}
_DELETED = object()  # bound by ``del x[key]``
_BLOCKS = frozenset({ast.For, ast.While, ast.With, ast.Try})  # run only when they may matter
_ASSIGNMENTS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign})


@dataclass
class _Frame:
    """One function being run: conditions under which some of its paths already ended."""

    pending: list[Doubt] = field(default_factory=list)
    relevant: frozenset[str] = frozenset()  # variables that can decide a skip; others are not computed
    # those and the names bound to one of them (``same = options``): a call handed one may change it
    watched: frozenset[str] = frozenset()
    forks_ended: int = 0  # forks where one path ended (return, continue, ...) and another went on
    ended_in_fork: bool = False  # a fork where every path ended: the variables are not those it ended with


def evaluate_test(
    facts: TestCode,
    function: ast.FunctionDef,
    skipping_helpers: frozenset[str],
    arguments: tuple[object, ...] = (),
) -> RuntimeVerdict:
    """Run ``function`` (a common test's definition) for the test class ``facts`` describes.

    ``skipping_helpers`` names the methods of the common files that may skip (others are not run);
    ``arguments`` are those a case of a ``parameterized.expand`` test passes (unknown when absent).
    """
    runner = _Runner(facts, skipping_helpers)
    try:
        runner.call(function, list(arguments), {}, depth=0)
    except SkipSignal as signal:
        return RuntimeVerdict("skipped", signal.skipped.reason, signal.skipped.line)
    except Undecided as undecided:
        return RuntimeVerdict(
            "undecided",
            condition=undecided.text(),
            unknown=undecided.unknown(runner.evaluator.value, runner.evaluator.handlers),
        )
    except Raised:  # an exception no handler catches: the test fails, it ran
        return RuntimeVerdict("ran", raised=True)
    return RuntimeVerdict("ran", raised=runner.raised)


class _Runner:
    def __init__(self, facts: TestCode, skipping_helpers: frozenset[str]):
        self.facts, self.skipping_helpers = facts, skipping_helpers
        self.depth = 0
        self.evaluator = Evaluator(facts, self._call_helper, handed_back=lambda: self.handed)
        self.handed: dict[str, object] | None = None  # what the helper just run hands back, if certain
        self.frame = _Frame()
        self.raised = False  # the test itself ended by a raise

    # -- functions --------------------------------------------------------------------------------
    def call(
        self, function: ast.FunctionDef, arguments: list[object], keywords: dict[str, object], depth: int
    ) -> object:
        variables = bind_parameters(function, arguments, keywords, self.evaluator.value)
        relevant = relevant_names(function, self.skipping_helpers)
        caller, self.frame = (
            self.frame,
            _Frame(relevant=relevant, watched=relevant | alias_names(function, relevant)),
        )
        ended = None
        try:
            try:
                self.block(function.body, variables)
            except Exit as exit_:
                self.raised = self.raised or (depth == 0 and exit_.kind == "raise")
                # kept past the handler without its traceback, which holds this frame: each return
                # of a helper would otherwise leave a cycle of frames for the collector
                ended = exit_.with_traceback(None)
            frame = self.frame  # what the helper hands back is certain on the only path it could take
            certain = not (frame.pending or frame.forks_ended or frame.ended_in_fork)
            returned = certain and (ended is None or ended.kind == "return")
            self.handed = handed_back(function, variables, frame.relevant) if returned else None
            return ended.value if ended is not None and ended.kind == "return" else None
        except Skipped as skipped:
            raise self._skip(skipped) from None
        finally:
            self.frame = caller

    def _skip(self, skipped: Skipped) -> Exception:
        """A skip reached on a path the frame is unsure the test takes is undecided."""
        if self.frame.pending:
            return Undecided(self.frame.pending[0])
        return SkipSignal(skipped)

    def _call_helper(
        self,
        name: str,
        arguments: list[object] | None,
        keywords: dict[str, object],
        inherited: bool = False,
        module: bool = False,
        node: ast.Call | None = None,
    ) -> object:
        """``self.<name>(...)``, ``super().<name>(...)`` from an override (``inherited``), or
        ``<name>(self, ...)``, a module-level function of a common file (``module``: ``arguments``
        are those after ``self``, None when an unpacked one is unknown)."""
        if module:
            find, written = self.facts.module_function, f"{name}(self, ...)"
        else:
            find = self.facts.inherited_definition if inherited else self.facts.definition
            written = f"{'super()' if inherited else 'self'}.{name}(...)"
        definition = find(name) if find is not None else None
        self.handed = None  # until the helper is run to its end
        if definition is None or arguments is None or self.depth >= MAX_DEPTH:
            if name in self.skipping_helpers:  # a call that may skip and cannot be followed
                raise Undecided(Doubt(f"{written} may skip"))
            return Unknown(written)
        self.depth += 1
        try:
            return self.call(definition, arguments, keywords, self.depth)
        finally:
            self.depth -= 1

    # -- statements -------------------------------------------------------------------------------
    def block(self, statements: list[ast.stmt], variables: dict[str, object]) -> None:
        for statement in statements:
            self.statement(statement, variables)

    def statement(self, node: ast.stmt, variables: dict[str, object]) -> None:
        value = self.evaluator.value
        kind = type(node)
        if kind in _BLOCKS and self._inert(node, variables):
            self._apply_effects([node], variables)
            return
        if kind is ast.Expr and not (found := effects(node, self.skipping_helpers)).may_skip:
            changed = mutated_name(node.value) if isinstance(node.value, ast.Call) else None
            if changed is not None and changed in self.frame.relevant:
                variables[changed] = self._mutated(node.value, variables)
                return
            if not self._hands_changeable(found, variables):
                return  # else run: a call handed a container that decides a skip may change it
        if kind in _ASSIGNMENTS and not self._changes_relevant(node, variables):
            return
        try:
            if kind is ast.If:  # the commonest statement run
                self._if(node, variables)
            elif kind is ast.Expr:
                value(node.value, variables)
            elif isinstance(node, ast.Assign):
                result = value(node.value, variables)
                for target in node.targets:
                    self._bind(target, result, variables)
                for changed in mutated_names(node.value):  # x = inputs.pop("labels") changes inputs too
                    if isinstance(variables.get(changed), (dict, list, set)):
                        variables[changed] = Unknown(changed)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._bind(node.target, value(node.value, variables), variables)
            elif isinstance(node, ast.AugAssign):
                held = variables.get(node.target.id) if isinstance(node.target, ast.Name) else None
                result = augmented(node, lambda part: value(part, variables))
                if isinstance(held, CHANGEABLE):  # changed in place, seen by every variable holding it
                    for name, current in list(variables.items()):
                        if current is held:
                            variables[name] = Unknown(name) if isinstance(result, Unknown) else result
                else:
                    self._bind(node.target, result, variables)
            elif isinstance(node, (ast.For, ast.While)):
                self._loop(node, variables)
            elif isinstance(node, (ast.With, ast.Try)):
                self._guarded(node, variables)
            elif isinstance(node, ast.Return):
                raise Exit("return", value(node.value, variables) if node.value is not None else None)
            elif isinstance(node, ast.Raise):
                self._raise(node, variables)
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    self._bind(target, _DELETED, variables)
            elif isinstance(node, (ast.Break, ast.Continue)):
                raise Exit("break" if isinstance(node, ast.Break) else "continue")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                variables[node.name] = Unknown(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    variables[(alias.asname or alias.name).split(".")[0]] = Unknown(alias.name)
        except Skipped as skipped:
            raise self._skip(skipped) from None

    def _guarded(self, node: ast.With | ast.Try, variables: dict[str, object]) -> None:
        """``with`` / ``try`` around calls the library may show raising (see :class:`Raised`)."""
        for item in getattr(node, "items", ()):
            if item.optional_vars is not None:
                self._bind(item.optional_vars, self.evaluator.value(item.context_expr, variables), variables)
        handler = None
        try:
            try:
                self.block(node.body, variables)
            except Raised as raised:
                if raised.in_subtest(node):
                    raise Undecided(Doubt(f"{raised.name} raised inside a subTest")) from None
                handler = raised.handler(node)
                if handler is None:
                    raise
                self.block(handler.body, variables)
        finally:
            self.block(getattr(node, "finalbody", []), variables)
        self.block(getattr(node, "orelse", []) if handler is None else [], variables)

    def _mutated(self, call: ast.Call, variables: dict[str, object]) -> object:
        """The new value of ``name`` after ``name.append(x)`` / ``.extend`` / ``.add`` (a fresh object:
        branches share their variables' values); unknown for anything else."""
        function = call.func
        container = variables.get(function.value.id)
        arguments = [self.evaluator.value(argument, variables) for argument in call.args]
        if isinstance(container, list) and function.attr in ("append", "extend") and len(arguments) == 1:
            added = arguments[0] if function.attr == "extend" else [arguments[0]]
            if isinstance(added, (list, tuple)):
                return [*container, *added]
        if isinstance(container, set) and function.attr == "add" and len(arguments) == 1:
            try:
                return {*container, arguments[0]}
            except TypeError:
                pass
        return Unknown(function.value.id)

    def _raise(self, node: ast.Raise, variables: dict[str, object]) -> None:
        exception = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exception is not None and ast.unparse(exception) in _SKIP_EXCEPTIONS:
            arguments = node.exc.args if isinstance(node.exc, ast.Call) else []
            reason = self.evaluator.value(arguments[0], variables) if arguments else ""
            raise Skipped(text(reason), node.lineno)
        raise Exit("raise")  # the test fails: it ran

    def _bind(self, target: ast.expr, result: object, variables: dict[str, object]) -> None:
        if isinstance(target, ast.Name):
            variables[target.id] = result
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element, item in bindings(target, result):
                self._bind(element, item, variables)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            # a new dict: branches share the values of their variables
            name, key = target.value.id, self.evaluator.value(target.slice, variables)
            container = variables.get(name)
            if isinstance(container, dict) and isinstance(key, (str, int)):
                changed = {item: value for item, value in container.items() if item != key}
                variables[name] = changed if result is _DELETED else {**changed, key: result}
            else:
                variables[name] = Unknown(name)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = variables.get(target.value.id)
            if isinstance(owner, Config):  # every variable holding that configuration sees the change
                changed = owner.with_value(target.attr, result)
                for name, held in list(variables.items()):
                    if held == owner:
                        variables[name] = changed

    # -- branches and loops -----------------------------------------------------------------------
    def _run_branch(self, statements: list[ast.stmt], variables: dict[str, object]) -> tuple[str, object]:
        """Run a branch on a copy of the variables: ``(how it ended, detail)``."""
        try:
            self.block(statements, variables)
        except SkipSignal as signal:
            return "skip", signal
        except Undecided as undecided:
            return "undecided", undecided
        except Exit as exit_:
            return "exit", exit_
        except Raised:  # the test fails there: that path ends, as run
            return "exit", Exit("raise")
        return "next", None

    def _if(self, node: ast.If, variables: dict[str, object]) -> None:
        found = truth_of(self.evaluator.value(node.test, variables))
        if found is not Truth.TRUTH_VALUE_UNKNOWN:
            self.block(node.body if found is Truth.ALWAYS_TRUE else node.orelse, variables)
            return
        if self._inert(node, variables):
            self._apply_effects([node], variables, condition=node.test)
            return
        self._fork(node.test, [node.body, node.orelse], variables)

    def _changes_relevant(self, node: ast.stmt, variables: dict[str, object]) -> bool:
        found = effects(node, self.skipping_helpers)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):  # same = options
            return not found.changed.isdisjoint(self.frame.watched)
        return not found.changed.isdisjoint(self.frame.relevant) or self._hands_changeable(found, variables)

    def _inert(self, node: ast.stmt, variables: dict[str, object]) -> bool:
        """Neither skips, nor assigns a variable that can decide a skip, nor hands a call a container
        such a variable holds: it need not be run."""
        found = effects(node, self.skipping_helpers)
        return not (
            found.may_skip or found.names & self.frame.relevant or self._hands_changeable(found, variables)
        )

    def _hands_changeable(self, found: Effects, variables: dict[str, object]) -> bool:
        """A call in the statement is handed a dict, list or set a variable that can decide a skip
        holds: it may change it in place."""
        if found.passed.isdisjoint(self.frame.watched):  # most statements: no generator made
            return False
        return any(isinstance(variables.get(name), CHANGEABLE) for name in found.passed & self.frame.watched)

    def _apply_effects(
        self, statements: list[ast.stmt], variables: dict[str, object], condition: ast.AST | None = None
    ) -> None:
        """Statements that cannot skip are not run: what they assign becomes unknown, and a path
        they may end makes later skips undecided."""
        doubt = Doubt(condition, dict(variables)) if condition is not None else None
        for statement in statements:
            found = effects(statement, self.skipping_helpers)
            for name in found.names:
                variables[name] = Unknown(name)
            for name, attribute in found.attributes:
                owner = variables.get(name)
                if isinstance(owner, Config):
                    variables[name] = owner.with_value(attribute, Unknown(f"{name}.{attribute}"))
            if found.ends is not None:
                self.frame.pending.append(doubt or Doubt(found.ends))
                self.frame.forks_ended += 1  # a loop around it may skip what follows in its body

    def _fork(
        self, condition: ast.AST | str, branches: list[list[ast.stmt]], variables: dict[str, object]
    ) -> None:
        """Run each branch when only the run knows which one is taken."""
        scopes = [dict(variables) for _ in branches]
        pending = list(self.frame.pending)
        outcomes = []
        for statements, scope in zip(branches, scopes, strict=True):
            self.frame.pending = list(pending)
            outcomes.append(self._run_branch(statements, scope))
        self.frame.pending = pending
        kinds = {kind for kind, _ in outcomes}
        if kinds == {"skip"}:
            raise outcomes[0][1]
        if "undecided" in kinds:
            raise next(detail for kind, detail in outcomes if kind == "undecided")
        if "skip" in kinds:
            raise Undecided(Doubt(condition, dict(variables)))
        if kinds == {"exit"}:
            self.frame.ended_in_fork = True
            raise outcomes[0][1]
        if "exit" in kinds:
            self.frame.pending.append(Doubt(condition, dict(variables)))
            self.frame.forks_ended += 1
        going_on = [scope for (kind, _), scope in zip(outcomes, scopes, strict=True) if kind == "next"]
        merge_branches(variables, going_on)

    def _loop(self, node: ast.For | ast.While, variables: dict[str, object]) -> None:
        items = loop_items(self.evaluator.value(node.iter, variables)) if isinstance(node, ast.For) else None
        if items is None:
            if isinstance(node, ast.For):
                self._bind(node.target, Unknown(node=node.target), variables)
            self._fork(node, [node.body, []], variables)
            return
        ended_before = self.frame.forks_ended
        try:
            run_loop(
                node,
                items,
                lambda item: self._bind(node.target, item, variables),
                lambda statements: self.block(statements, variables),
            )
        finally:
            if self.frame.forks_ended != ended_before:
                # some iteration may have left early: what the body assigns is known only at run time
                for name in effects(node, self.skipping_helpers).names:
                    variables[name] = Unknown(name)
