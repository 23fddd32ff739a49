"""Keywords a configuration class does not declare, kept by the base class as attributes.

``T5Config(bos_token_id=0)``: T5's dataclass fields have no ``bos_token_id``, so the keyword goes to
``__post_init__(**kwargs)``, and the base configuration's ``__post_init__`` sets every keyword left
in ``kwargs`` on the instance (``for key, value in kwargs.items(): setattr(self, key, value)``).
The value passed is then the attribute's, unless something on the way takes it out: the base pops
the generation parameters (the keys of ``GenerationConfig._get_default_generation_params()``) and a
few names of its own, and a subclass's ``__post_init__`` may pop or set it. The answer is yes only
when all of this is read: the loop is in the base's ``__post_init__``, the name is no generation
parameter, no property and no string written in the base's file, and every other class along the
MRO defines no ``__init__``, its file names it in no string, and its ``__post_init__`` touches
``kwargs`` only by literal keys and hands it on with ``super().__post_init__(**kwargs)``.
"""

from __future__ import annotations

import ast
import posixpath

from model_debugging.skips.models.base_classes import BASE_CONFIGS
from model_debugging.skips.models.generation_cache.model_outputs import parsed_file
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library

_GENERATION_FILE = "generation/configuration_utils.py"  # beside the base configuration's file
_GENERATION_DEFAULTS = "_get_default_generation_params"


def keeps_keyword(library: Library, info: LibraryClass, name: str) -> bool:
    """Whether ``name``, passed to the configuration class ``info`` that does not declare it, is the
    instance's attribute with the value passed."""
    mro = library.mro(info)
    base = next((ancestor for ancestor in mro if ancestor.name in BASE_CONFIGS), None)
    base_path = library.path_of(base) if base is not None else None
    if base is None or base_path is None:
        return False
    if any(name in ancestor.methods for ancestor in mro):
        return False  # a property of that name receives the value
    others = [(library.path_of(ancestor), ancestor) for ancestor in mro if ancestor is not base]
    if any(path is None or "__init__" in ancestor.methods for path, ancestor in others):
        return False  # a class of its own constructor, or one the library does not say where it is
    key = ("kept keyword", name, base_path, tuple((path, ancestor.name) for path, ancestor in others))
    return bool(library.memoized(key, lambda: _kept(library, name, base_path, base.name, others)))


def _kept(
    library: Library, name: str, base_path: str, base_name: str, others: list[tuple[str, LibraryClass]]
) -> bool:
    base_file = parsed_file(library, base_path)
    base = _class_node(base_file, base_name)
    generation = parsed_file(library, posixpath.join(posixpath.dirname(base_path), _GENERATION_FILE))
    popped = _generation_parameters(generation)
    if base is None or popped is None or name in popped or name in _strings(base_file):
        return False
    if not sets_remaining_keywords(_method(base, "__post_init__")):
        return False
    for path, ancestor in others:
        tree = parsed_file(library, path)
        node = _class_node(tree, ancestor.name)
        if node is None or name in _strings(tree):
            return False
        post_init = _method(node, "__post_init__")
        if post_init is not None and not _hands_on_keywords(post_init):
            return False
    return True


def _class_node(tree: ast.Module | None, name: str) -> ast.ClassDef | None:
    return next(
        (
            item
            for item in (tree.body if tree else ())
            if isinstance(item, ast.ClassDef) and item.name == name
        ),
        None,
    )


def _method(node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == name), None)


def _strings(node: ast.AST) -> set[str]:
    """The string literals under ``node`` (kept on it: a file's are asked for once per keyword)."""
    found = getattr(node, "_strings", None)
    if found is None:
        found = node._strings = {  # type: ignore[attr-defined]
            item.value
            for item in ast.walk(node)
            if isinstance(item, ast.Constant) and isinstance(item.value, str)
        }
    return found


def _generation_parameters(tree: ast.Module | None) -> set[str] | None:
    """The keys of the dict ``GenerationConfig._get_default_generation_params()`` returns (None
    when it is not one literal-keyed dict)."""
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == _GENERATION_DEFAULTS:
            returns = [item for item in ast.walk(node) if isinstance(item, ast.Return)]
            if len(returns) == 1 and isinstance(returns[0].value, ast.Dict):
                keys = returns[0].value.keys
                if all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in keys):
                    return {key.value for key in keys}
            return None
    return None


def sets_remaining_keywords(function: ast.FunctionDef | None) -> bool:
    """``for key, value in kwargs.items(): ... setattr(self, key, value)`` in the base's ``__post_init__``."""
    keywords = function.args.kwarg.arg if function is not None and function.args.kwarg else None
    for loop in ast.walk(function) if keywords else ():
        if (
            isinstance(loop, ast.For)
            and ast.unparse(loop.iter) == f"{keywords}.items()"
            and isinstance(loop.target, ast.Tuple)
            and len(loop.target.elts) == 2
        ):
            pair = ", ".join(ast.unparse(item) for item in loop.target.elts)
            if any(
                isinstance(call, ast.Call) and ast.unparse(call) == f"setattr(self, {pair})"
                for call in ast.walk(loop)
            ):
                return True
    return False


def _hands_on_keywords(function: ast.FunctionDef) -> bool:
    """A subclass's ``__post_init__`` reads ``kwargs`` only by literal keys and passes it on with
    ``super().__post_init__(**kwargs)``."""
    if function.args.kwarg is None:
        return False
    keywords = function.args.kwarg.arg
    handed_on = False
    literal_uses: set[int] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "super().__post_init__":
            handed_on = handed_on or any(
                item.arg is None and ast.unparse(item.value) == keywords for item in node.keywords
            )
            literal_uses.update(id(item.value) for item in node.keywords if item.arg is None)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            literal_uses.add(id(node.value))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            literal_uses.add(id(node.func.value))
    uses = [node for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == keywords]
    return handed_on and all(id(node) in literal_uses for node in uses)
