"""The class a composite configuration's ``__post_init__`` gives a part declared ``AutoConfig``.

A dict passed for such a part, or no part at all, is turned into a configuration by the composite's
``__post_init__``, in one ``if isinstance(self.<part>, dict): ... elif self.<part> is None: ...``
chain: ``self.<part>["model_type"] = self.<part>.get("model_type", "<type>")`` (or a forced
``"<type>"``), then ``self.<part> = CONFIG_MAPPING[<type>](**self.<part>)`` or
``self.<part> = XConfig(...)``. That chain is run here on what the tester passed. Anything else
(another assignment to the part, a test of another shape, an ``__init__`` of the configuration's
own, a type that cannot be read) leaves the class to the run.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Literal

from model_debugging.skips.models.base_classes import BASE_CONFIGS, is_configuration
from model_debugging.skips.models.config.texts import own_constructor
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

_TYPE_KEY = "model_type"
_TYPE_TABLE = "CONFIG_MAPPING"
_LOGGING_ROOTS = frozenset({"logger", "warnings"})
_UNREAD = object()  # the model type of a dict whose items were not read
Given = Literal["dict", "none"]


def part_class(
    library: Library, owner: LibraryClass, name: str, given: Mapping[str, object] | None
) -> LibraryClass | None:
    """The configuration class of part ``name`` of ``owner`` once ``__post_init__`` has run, for a
    dict with the items ``given`` passed for it (None: the part is None); None when not certain."""
    function = _post_init(library, owner)
    branch = _branch(function, name, "dict" if given is not None else "none") if function else None
    if branch is None:
        return None
    model_type = given.get(_TYPE_KEY) if given is not None else None
    # a dict holding a model type only the run knows: only a branch that forces one is read
    known = model_type is None or isinstance(model_type, str)
    state = _Branch(library, name, model_type if known else _UNREAD)
    for statement in branch:
        if not state.run(statement):
            return None
    return state.built


def _post_init(library: Library, owner: LibraryClass) -> ast.FunctionDef | None:
    """``owner``'s ``__post_init__`` when no class of its MRO before the base configuration defines
    ``__init__`` (an old-style constructor may convert the part first)."""
    for ancestor in library.mro(owner):
        if ancestor.name in BASE_CONFIGS:
            return None
        path = library.path_of(ancestor)
        found = library.fact(own_constructor, path, ancestor.name) if path is not None else None
        if found is None or isinstance(found, ast.FunctionDef):
            return found
    return None


def _branch(function: ast.FunctionDef, name: str, given: Given) -> list[ast.stmt] | None:
    """:func:`_read_branch`, kept on the ``__post_init__``'s node (it depends on nothing else)."""
    kept = function.__dict__.setdefault("_part_branches", {})
    if (name, given) not in kept:
        kept[(name, given)] = _read_branch(function, name, given)
    return kept[(name, given)]


def _read_branch(function: ast.FunctionDef, name: str, given: Given) -> list[ast.stmt] | None:
    """The statements of the one ``if``/``elif`` chain on ``self.<name>`` that run for ``given``;
    None unless the chain tests only ``isinstance(self.<name>, dict)`` / ``self.<name> is None`` and
    nothing before it touches the part, nothing after it assigns it again."""
    chains = [
        statement
        for statement in function.body
        if isinstance(statement, ast.If) and _tests_part(statement, name)
    ]
    if len(chains) != 1:
        return None
    chain = chains[0]
    position = function.body.index(chain)
    before, after = function.body[:position], function.body[position + 1 :]
    if any(_mentions_part(node, name) for statement in before for node in ast.walk(statement)):
        return None  # the part read or changed before the chain (`self.x.setdefault(...)`)
    if any(_rebinds_part(node, name) for statement in after for node in ast.walk(statement)):
        return None
    node: ast.If | None = chain
    while node is not None:
        kind = _test_kind(node.test, name)
        if kind is None:
            return None
        if kind == given:
            return node.body
        orelse = node.orelse
        node = orelse[0] if len(orelse) == 1 and isinstance(orelse[0], ast.If) else None
        if node is None and orelse:
            return None  # an `else` taken for what the tests above did not name: not read
    return None  # nothing runs: the part stays as passed


def _tests_part(node: ast.If, name: str) -> bool:
    return _test_kind(node.test, name) is not None


def _test_kind(test: ast.expr, name: str) -> Given | None:
    text = ast.unparse(test)
    if text == f"isinstance(self.{name}, dict)":
        return "dict"
    if text == f"self.{name} is None":
        return "none"
    return None


def _mentions_part(node: ast.AST, name: str) -> bool:
    return ast.unparse(node) == f"self.{name}" if isinstance(node, ast.Attribute) else False


def _rebinds_part(node: ast.AST, name: str) -> bool:
    """``self.<name> = ...`` (a value set on the part's configuration keeps its class)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and ast.unparse(node) == f"self.{name}"
    )


class _Branch:
    """One branch run on the part's model type: what it sets it to, and the class it builds."""

    def __init__(self, library: Library, name: str, model_type: object):
        self.library, self.part = library, f"self.{name}"
        self.model_type = model_type
        self.local_types: dict[str, str] = {}
        self.built: LibraryClass | None = None

    def run(self, statement: ast.stmt) -> bool:
        """Run one statement; False when it does something not read."""
        if isinstance(statement, ast.Expr):
            return _is_logging(statement.value)
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            return False
        target, value = ast.unparse(statement.targets[0]), statement.value
        if target == f"{self.part}[{_TYPE_KEY!r}]":
            self.model_type = self._type(value)
            return self.model_type is not None
        if isinstance(statement.targets[0], ast.Name):
            found = self._type(value)
            if found is not None:
                self.local_types[target] = found
            return found is not None
        if target == self.part:
            self.built = self._class(value)
            return self.built is not None
        return not target.startswith(self.part)  # a value set on another part (`self.x.y = ...`)

    def _type(self, node: ast.expr) -> str | None:
        """A model type: a literal, ``self.<part>.get("model_type", "<type>")``,
        ``self.<part>["model_type"]`` or a local name bound to one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.local_types.get(node.id)
        text = ast.unparse(node)
        if self.model_type is _UNREAD:
            return None
        if text == f"{self.part}[{_TYPE_KEY!r}]":
            return self.model_type
        if (
            isinstance(node, ast.Call)
            and text.startswith(f"{self.part}.get(")
            and len(node.args) == 2
            and ast.unparse(node.args[0]) == repr(_TYPE_KEY)
        ):
            return self.model_type or self._type(node.args[1])
        return None

    def _class(self, node: ast.expr) -> LibraryClass | None:
        """The configuration class ``CONFIG_MAPPING[<type>](...)`` or ``XConfig(...)`` builds."""
        if not isinstance(node, ast.Call):
            return None
        function = node.func
        if isinstance(function, ast.Subscript) and ast.unparse(function.value) == _TYPE_TABLE:
            model_type = self._type(function.slice)
            entries = dict(self.library.mappings.get("CONFIG_MAPPING_NAMES", ()))
            names = entries.get(model_type, ()) if model_type is not None else ()
            return self.library.find(names[0]) if len(names) == 1 else None
        if isinstance(function, ast.Name):
            found = self.library.find(function.id)
            return found if found is not None and is_configuration(self.library, found) else None
        return None


def _is_logging(node: ast.expr) -> bool:
    """``logger.info(...)`` / ``warnings.warn(...)``: changes nothing the part depends on."""
    if not isinstance(node, ast.Call):
        return False
    root = node.func
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in _LOGGING_ROOTS
