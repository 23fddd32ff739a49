"""The common test files read with ``ast``, for the evaluator to run their definitions."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from model_debugging.skips.decide.case_arguments import case_arguments
from model_debugging.skips.interp.effects import passes_self, super_method
from model_debugging.skips.parse.ast_nodes import dotted_name, dotted_text
from model_debugging.skips.parse.case_names import case_name
from model_debugging.skips.parse.signatures import signature

_SKIP_CALLS = ("self.skipTest", "pytest.skip")
_MODEL_CLASS_LISTS = ("self.all_model_classes", "self.all_generative_model_classes")


@dataclass(frozen=True)
class CommonDefinitions:
    """``(path, class name, method name) -> ast.FunctionDef`` of the common files, and which may skip.

    A definition may skip when it calls ``self.skipTest`` / ``pytest.skip`` / raises ``SkipTest``
    anywhere in its body, or calls ``self.<helper>`` where some common definition of that name may.
    ``module_functions`` are the module-level functions of the common files that a test calls with
    itself (``_test_eager_matches_sdpa_inference(self, ...)``), by name; a name defined differently
    in two files is left out (a call of it, if it may skip, is then undecided).
    """

    functions: dict[tuple[str, str, str], ast.FunctionDef]
    may_skip: frozenset[str]  # method and module function names
    module_functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    # (path, class name, method name) -> the arguments of each case of a parameterized.expand test
    case_arguments: dict[tuple[str, str, str], tuple[tuple[object, ...], ...]] = field(default_factory=dict)

    def get(self, path: str | None, class_name: str, method: str) -> ast.FunctionDef | None:
        return self.functions.get((path or "", class_name, method))

    def case_names(self, path: str | None, class_name: str, method: str) -> tuple[str, ...] | None:
        """The methods ``parameterized.expand`` makes of a common test, named from its computed
        parameters (None when they are not computed)."""
        cases = self.case_arguments.get((path or "", class_name, method))
        if cases is None:
            return None
        return tuple(
            case_name(method, number, len(cases), arguments[0] if arguments else None)
            for number, arguments in enumerate(cases)
        )


def read_common_definitions(sources: dict[str, str]) -> CommonDefinitions:
    """``sources`` maps each common file's path to its text (a file that does not parse is left out)."""
    functions: dict[tuple[str, str, str], ast.FunctionDef] = {}
    module_functions: dict[str, ast.FunctionDef] = {}
    cases: dict[tuple[str, str, str], tuple[tuple[object, ...], ...]] = {}
    ambiguous: set[str] = set()
    for path, source in sources.items():
        try:
            tree = ast.parse(source, filename=path)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        functions[path, node.name, item.name] = item
                        arguments = case_arguments(item, tree)
                        if arguments is not None:
                            cases[path, node.name, item.name] = arguments
            elif isinstance(node, ast.FunctionDef) and _takes_the_test(node):
                known = module_functions.setdefault(node.name, node)
                if known is not node and ast.dump(known) != ast.dump(node):
                    ambiguous.add(node.name)
    for name in ambiguous:
        del module_functions[name]
    direct: dict[str, bool] = {}
    calls: dict[str, set[str]] = {}
    every = [*((name, function) for (_, _, name), function in functions.items()), *module_functions.items()]
    for name, function in every:
        skips, called, _, _ = _body_calls(function)
        direct[name] = direct.get(name, False) or skips
        calls.setdefault(name, set()).update(called)
    may_skip = {name for name, skips in direct.items() if skips}
    changed = True
    while changed:  # a helper that calls a skipping helper may skip too
        changed = False
        for name, called in calls.items():
            if name not in may_skip and called & may_skip:
                may_skip.add(name)
                changed = True
    return CommonDefinitions(functions, frozenset(may_skip), module_functions, cases)


def _takes_the_test(function: ast.FunctionDef) -> bool:
    """A module-level function whose first parameter is ``self``: a common test hands itself over."""
    return signature(function).receiver == "self"


def override_to_evaluate(function: ast.FunctionDef, skipping_helpers: frozenset[str]) -> bool:
    """Whether a model file's own definition of a test is run on the facts like a common one: it is
    shaped like one (a loop over ``self.all_model_classes`` / ``self.all_generative_model_classes``,
    the facts the evaluator knows) and may skip (itself, or through ``self.<helper>`` /
    ``super().<helper>`` where a common definition of ``helper`` may). An override that only hands
    over to ``super().<its name>(...)`` (to change an argument) is run too: the definition it
    delegates to decides. So is one that may return before a skip (``if self.supports_it: return
    super().test_x()`` then ``self.skipTest(...)``), whose skip the rules cannot tell is reached.
    Other overrides keep the rules' answer: their top-level skips and guards."""
    found = getattr(function, "_override_to_evaluate", None)  # asked again for each test class
    if found is None or found[0] is not skipping_helpers:
        found = (skipping_helpers, _to_evaluate(function, skipping_helpers))
        function._override_to_evaluate = found  # type: ignore[attr-defined]
    return found[1]


def _to_evaluate(function: ast.FunctionDef, skipping_helpers: frozenset[str]) -> bool:
    if _delegates_to_parent(function) and function.name in skipping_helpers:
        return True
    skips, called, supers, loops = _body_calls(function)
    may_skip = skips or bool((called | supers) & skipping_helpers)
    return may_skip and (_returns_early(function) or loops)


def _returns_early(function: ast.FunctionDef) -> bool:
    """A block of the body's top level holds a ``return`` (the rest may not run)."""
    return any(
        isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.Try))
        and any(isinstance(node, ast.Return) for node in ast.walk(statement))
        for statement in function.body
    )


def _delegates_to_parent(function: ast.FunctionDef) -> bool:
    """The body, past a docstring, is one ``super().<same name>(...)`` call (or its return)."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], (ast.Expr, ast.Return)):
        return False
    return super_method(body[0].value) == function.name


def _body_calls(function: ast.FunctionDef) -> tuple[bool, set[str], set[str], bool]:
    """In one walk: whether the body skips, the helpers it calls (``self.<name>(...)``,
    ``<name>(self, ...)``), those it calls on ``super()``, and whether it loops over
    ``self.all_model_classes`` / ``self.all_generative_model_classes``."""
    skips, loops = False, False
    called, supers = set(), set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            target = dotted_text(node.func)
            if target in _SKIP_CALLS:
                skips = True
            elif target.startswith("self.") and target.count(".") == 1:
                called.add(target[5:])
            elif isinstance(node.func, ast.Name) and passes_self(node):
                called.add(node.func.id)
        elif isinstance(node, ast.Raise) and node.exc is not None and "SkipTest" in ast.unparse(node.exc):
            skips = True
        elif isinstance(node, ast.For) and dotted_name(node.iter) in _MODEL_CLASS_LISTS:
            loops = True
        inherited = super_method(node)
        if inherited is not None:
            supers.add(inherited)
    return skips, called, supers, loops
