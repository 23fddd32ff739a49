"""The keywords a tester's ``get_config`` passes to its configuration, read from its source.

``return XConfig(key=self.attr, ...)``, or ``config = XConfig(...)`` followed only by
``config.key = value`` and ``return config``. A value naming a tester attribute is that attribute's
value; a local name ``get_config`` binds once is what it binds; a parameter is its literal default
(the scanner calls ``get_config()`` without arguments); a dict is read item by item. An override
that starts from ``super().get_config()`` (or ``Base.get_config(self)``) is read on top of the parent
tester's ``get_config`` (``tester_parent_config``).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable

from model_debugging.skips.interp.values import ABSENT, Unknown, source_expression
from model_debugging.skips.models.tester.config_locals import (
    built_then_set,
    literal_defaults,
    single_assignments,
    with_locals,
)
from model_debugging.skips.models.tester.self_writes import self_writes


def config_keywords(
    function: ast.FunctionDef | None,
    tester_attribute: Callable[[str], object],
    tester_method: Callable[[str], ast.FunctionDef | None] = lambda _: None,
    constructed_with: dict[str, object] | None = None,
    mutated: frozenset[str] | None = None,
) -> dict[str, object] | None:
    """``name -> value`` of ``XConfig(name=self.attr, ...)`` returned by the tester's ``get_config``
    (``function``). None when it has no such method with a plain call (``self.config_class(**kwargs)``;
    ``**self.<attr>`` of a dict the tester holds is read item by item).
    A value ``self.<method>()`` whose method only returns ``PartConfig(...)`` is that call's source
    (``tester_method`` finds the tester's methods; ``constructed_with``: the keywords ``setUp``
    passes to the tester; ``mutated``: tester attributes some method changes in place, whose
    dicts are not read; None when the tester's classes are not read). A value ``self.<attr>`` holding a dict display is read item by item too.
    """
    if function is None:
        return None
    call = next(
        (
            node.value
            for node in ast.walk(function)
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Call)
        ),
        None,
    )
    later: dict[str, ast.expr] = {}
    if call is None:  # config = XConfig(...); config.x = ...; return config
        call, later = built_then_set(function) or (None, {})
    if call is None:
        return None
    parameters = _constructor_parameters(tester_method("__init__"), constructed_with or {})

    def held(node: ast.expr) -> dict[str, object] | None:
        return _held_dict(node, tester_attribute, parameters, mutated)

    forwarded = function.args.kwarg.arg if forwards_keywords(function) and function.args.kwarg else None
    spread = [
        {} if isinstance(keyword.value, ast.Name) and keyword.value.id == forwarded else held(keyword.value)
        for keyword in call.keywords
        if keyword.arg is None
    ]
    if None in spread:
        return None
    local = {**literal_defaults(function), **single_assignments(function)}
    passed = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg is not None}
    found = {name: value for items in spread if items is not None for name, value in items.items()}
    return {
        **found,
        **{
            name: _typed(held(value))
            or keyword_value(
                _returned_call(
                    _with_tester_literals(with_locals(value, local), tester_attribute),
                    tester_method,
                    tester_attribute,
                ),
                tester_attribute,
            )
            for name, value in {**passed, **later}.items()
        },
    }


def forwards_keywords(function: ast.FunctionDef) -> bool:
    """A ``get_config(self, **kwargs)`` whose only use of ``kwargs`` is ``**kwargs`` in one call: the
    keywords it is given are passed on to the configuration as they are."""
    name = function.args.kwarg.arg if function.args.kwarg else None
    uses = [node for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name]
    spreads = [
        keyword
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg is None and isinstance(keyword.value, ast.Name) and keyword.value.id == name
    ]
    return name is not None and len(uses) == 1 and len(spreads) == 1


def _typed(items: dict[str, object] | None) -> dict[str, object] | None:
    """A part's dict read item by item, unless its ``model_type`` is a value only the run knows."""
    if items is None or not isinstance(items.get("model_type", ""), str):
        return None
    return items or None


def mutated_attributes(classes: list[ast.ClassDef]) -> frozenset[str]:
    """Tester attributes some method of ``classes`` changes in place (``self.x[k] = v``,
    ``del self.x[k]``, ``self.x.update(...)``, ``self.x |= ...``)."""
    return frozenset().union(*(self_writes(node).mutated for node in classes))


def _constructor_parameters(
    init: ast.FunctionDef | None, constructed_with: dict[str, object]
) -> dict[str, object]:
    """The tester's ``__init__`` parameters that its body never rebinds, as the test class's
    ``setUp`` constructs it: the keyword it passes, else the literal default."""
    if init is None:
        return {}
    rebound = {
        node.id for node in ast.walk(init) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    plain = (bool, int, float, str, type(None), list, tuple, dict)
    values = {
        name: value if isinstance(value, plain) else Unknown(name, exists=True)
        for name, value in constructed_with.items()
        if name not in rebound
    }
    for name, default in literal_defaults(init).items():
        if name not in rebound:
            values.setdefault(name, ast.literal_eval(default))
    return values


def _held_dict(
    node: ast.expr,
    tester_attribute: Callable[[str], object],
    parameters: dict[str, object],
    mutated: frozenset[str] | None,
) -> dict[str, object] | None:
    """``self.<attr>`` where the tester's attribute is a dict with literal string keys that no method
    changes in place (a literal, or the source of its display: CSM's ``config={...}``, Higgs Audio's
    ``self.config_kwargs = {"vocab_size": vocab_size, ...}``): its items, a name there being the
    ``__init__`` parameter's value, values only the run knows left unknown. None for anything else."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
        return None
    if mutated is None or node.attr in mutated:
        return None
    value = tester_attribute(node.attr)
    if isinstance(value, dict):
        return dict(value) if all(isinstance(key, str) for key in value) else None
    display = dict_display(value)
    if display is None:
        return None
    return {
        key.value: _literal_or_unknown(item, parameters)
        for key, item in zip(display.keys, display.values, strict=True)
    }


def dict_display(value: object) -> ast.Dict | None:
    """The dict display an unknown value's source writes, when all its keys are literal strings
    (None for a ``**`` inside, a computed key, or any other source)."""
    if not isinstance(value, Unknown) or not value.source.lstrip().startswith("{"):
        return None
    node = source_expression(value)
    keys = node.keys if isinstance(node, ast.Dict) else [None]
    return node if all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in keys) else None


def _literal_or_unknown(node: ast.expr, parameters: dict[str, object]) -> object:
    """A literal, a parameter of the tester's ``__init__`` (its value), else unknown."""
    if isinstance(node, ast.Name) and node.id in parameters:
        return parameters[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return Unknown(ast.unparse(node), exists=True)


def _returned_call(
    node: ast.expr,
    tester_method: Callable[[str], ast.FunctionDef | None],
    tester_attribute: Callable[[str], object] = lambda _: ABSENT,
) -> ast.expr:
    """``self.get_backbone_config()`` -> the ``XConfig(...)`` call that method's one statement returns
    (a class named by a plain name, or ``CONFIG_MAPPING["<type>"]``, or by an attribute of the tester
    that names one: ``self.module_config_class(...)`` with ``module_config_class = T5GemmaModuleConfig``);
    also a method of a tester the tester holds (``self.text_model_tester.get_config()``, asked as
    ``"text_model_tester.get_config"``), and such a call's ``.to_dict()``. Any other value as it is."""
    if (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_dict"
    ):
        inner = _returned_call(node.func.value, tester_method, tester_attribute)
        return node if inner is node.func.value else ast.Call(ast.Attribute(inner, "to_dict"), [], [])
    if not (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and isinstance(node.func, ast.Attribute)
    ):
        return node
    owner = ast.unparse(node.func.value)
    if owner != "self" and not (owner.startswith("self.") and owner[5:].isidentifier()):
        return node
    method = tester_method(node.func.attr if owner == "self" else f"{owner[5:]}.{node.func.attr}")
    body = [statement for statement in method.body if not _is_docstring(statement)] if method else []
    returned = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    if owner == "self":  # a held tester's own attributes are not this tester's
        returned = _with_tester_literals(
            _class_attribute_called(returned, tester_attribute), tester_attribute
        )
    return returned if _is_config_call(returned) else node


_LITERAL_TYPES = (bool, int, float, str, type(None))


def _with_tester_literals(
    node: ast.expr | None, tester_attribute: Callable[[str], object]
) -> ast.expr | None:
    """``node`` with each ``self.<attr>`` whose tester attribute is a plain literal written as that
    literal, so a part built inside it (``decoder=XConfig(bos_token_id=self.bos_token_id)``) holds
    the value. Only for code of this tester's own methods, where ``self`` is the tester."""
    if node is None:
        return None
    literals = {
        inner.attr: value
        for inner in ast.walk(node)
        if _is_self_attribute(inner) and isinstance(value := tester_attribute(inner.attr), _LITERAL_TYPES)
    }
    if not literals:
        return node
    return _TesterLiterals(literals).visit(copy.deepcopy(node))  # the function's tree is shared


def _is_self_attribute(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Load)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


class _TesterLiterals(ast.NodeTransformer):
    def __init__(self, literals: dict[str, object]):
        self.literals = literals

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:  # noqa: N802 - ast's visitor name
        if _is_self_attribute(node) and node.attr in self.literals:
            return ast.Constant(self.literals[node.attr])
        return self.generic_visit(node)


def _class_attribute_called(
    node: ast.expr | None, tester_attribute: Callable[[str], object]
) -> ast.expr | None:
    """``self.<attr>(...)`` written as a call of the class the tester's attribute names; else ``node``."""
    if not (isinstance(node, ast.Call) and _is_self_attribute(node.func)):
        return node
    value = tester_attribute(node.func.attr)
    if not (isinstance(value, Unknown) and value.source.isidentifier()):
        return node
    return ast.Call(ast.Name(value.source, ast.Load()), node.args, node.keywords)


def _is_config_call(node: ast.expr | None) -> bool:
    """``XConfig(...)`` or ``CONFIG_MAPPING["<type>"](...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return isinstance(func, ast.Name) or (
        isinstance(func, ast.Subscript)
        and isinstance(func.value, ast.Name)
        and isinstance(func.slice, ast.Constant)
        and isinstance(func.slice.value, str)
    )


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def keyword_value(node: ast.expr, tester_attribute: Callable[[str], object]) -> object:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        value = tester_attribute(node.attr)
        return Unknown(node.attr, exists=True) if value is ABSENT else value
    if isinstance(node, ast.Dict) and all(
        isinstance(key, ast.Constant) and isinstance(key.value, str) for key in node.keys
    ):  # a part's dict ({"model_type": "bart", "vocab_size": self.vocab_size}): item by item
        return {
            key.value: keyword_value(item, tester_attribute)
            for key, item in zip(node.keys, node.values, strict=True)
        }
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return Unknown(ast.unparse(node), exists=True)
