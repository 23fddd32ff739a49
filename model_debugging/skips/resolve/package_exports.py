"""What the library's package has at its top: the names ``from transformers import X`` takes, and
its top-level modules (``transformers.activations``).

transformers' ``__init__.py`` replaces itself by a lazy module (``_LazyModule``): ``X`` comes from
the ``_import_structure`` lists the file spells, from ``define_import_structure`` over ``models/``
(the ``__all__`` lists of the models' modules, and the classes and functions decorated
``@requires``/``@export``), or is a submodule of the package (``from transformers import utils``).
The names spelt anywhere in ``__init__.py`` (its lists, its own imports, those under
``TYPE_CHECKING``) are taken as exported: more names than a run has, never fewer. So is a class of
a file with no ``__all__`` (a test's fake library). Where the lazy module answers a name it lacks by
another (2026: ``XTokenizerFast`` by ``XTokenizer``, a tokenizer by another of its converter in
``SLOW_TO_FAST_CONVERTERS``), the name is exported when that one is.

A name none of these gives is told missing (Python's ``cannot import name``) only when nothing the
lazy module reads spells it: not the lazy module's own file (a name whose ending it tests, as
``name.endswith("TokenizerFast")``, may be answered otherwise), not the dummy objects of
``utils/dummy_*.py`` (exported when a backend is missing), not any module of ``models/`` (a class
its modeling file leaves out of ``__all__`` is spelt there). Otherwise it is undecided, with the
reason: a guess either way could be wrong. An ``__init__.py`` that is no lazy module, or that does
not parse, is not looked at.

A top-level module is missing when no file, folder or alias the ``__init__.py`` spells
(``tokenization_utils_fast``) has its name; a top-level module file lacks a name when it binds none
of that name (``parse/bound_names.py``). The modules of ``models/`` and the dummy objects are found
through :meth:`~model_debugging.skips.resolve.library.Library.listing`: a warm scan sees one appear.
Which module of ``models/`` exports a name comes from an index of every module's exports, built
once (:func:`_models_exporters`); a name's answer reads the text of the module that exports it, or
of every module when none does.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from model_debugging.skips.parse.bound_names import bound_names
from model_debugging.skips.records.test_files import cannot_import, no_module
from model_debugging.skips.resolve.library import Library

_WORD = re.compile(r"\w+")
# `__all__ = [...]` (or `+=`, `.extend([...])`): its quoted names, up to the first `]`
_ALL = re.compile(r"^__all__\b[^\[\n]*\[([^\]]*)\]", re.MULTILINE)
_QUOTED = re.compile(r"""["'](\w+)["']""")
_DECORATED = re.compile(r"^@(?:requires|export)\b", re.MULTILINE)
_DEFINED = re.compile(r"^(?:class|def)\s+(\w+)", re.MULTILINE)
# a name the lazy module looks at by its ending: it may answer it with another
_ENDING = re.compile(r"""name\.endswith\(\s*["'](\w+)["']""")
_LAZY_FILE = "utils/import_utils.py"
_FAST_ENDINGS = ("TokenizerFast", "ImageProcessorFast")  # answered by the name without "Fast"
_NOT_READ_BY_THE_LAZY_MODULE = ("convert_", "modular_")  # files define_import_structure leaves out
_Value = TypeVar("_Value")
_PACKAGE, _FILE, _MISSING, _OTHER = "package", "module file", "missing", "other"  # a top-level module


@dataclass(frozen=True)
class Unexported:
    """``from <package> import name`` fails (``missing``) or may fail (``because`` says why it is
    not told)."""

    missing: bool
    because: str = ""


def package_export(library: Library, folder: str, name: str) -> Unexported | None:
    """Whether the package of ``folder`` (``src/transformers``) lacks ``name`` (see the module doc);
    None when it exports it or is not looked at."""
    return library.fact(_package_export, folder, name)


def _package_export(library: Library, folder: str, name: str) -> Unexported | None:
    spelt = _once(library, _init_words, folder)
    if spelt is None:
        return None
    lazy = library.source(f"{folder}/{_LAZY_FILE}") or ""
    if any(
        _exported(library, folder, spelt, known) for known in (name, *_answers(library, folder, lazy, name))
    ):
        return None
    package = folder.rpartition("/")[2]
    if name.startswith("_"):
        return Unexported(False, f"{package}'s lazy module may have {name}: a private name is not looked up")
    ending = next((end for end in _ENDING.findall(lazy) if name.endswith(end)), None)
    if ending is not None:
        return Unexported(
            False, f"{package}'s lazy module ({_LAZY_FILE}) answers a name ending in {ending} by another name"
        )
    word = re.compile(rf"\b{re.escape(name)}\b")
    dummies = _once(library, _dummy_paths, folder)
    modules = _once(library, _models_modules, folder)
    for path in (f"{folder}/{_LAZY_FILE}", *dummies, *modules):
        source = library.source(path) or ""
        if name in source and word.search(source):
            return Unexported(
                False, f"{package} may export {name}: {path} spells it but exports it nowhere read"
            )
    return Unexported(True)


def _once(library: Library, compute: Callable[[Library, str], _Value], folder: str) -> _Value:
    """``compute(library, folder)``, computed once per library (the package's words, its exports, ...)."""
    return library.memoized((compute, folder), lambda: compute(library, folder))


def _exported(library: Library, folder: str, spelt: frozenset[str], name: str) -> bool:
    """Whether the lazy module has ``name``: spelt in ``__init__.py`` (``spelt``), a submodule, in
    an ``__all__`` of ``models/``, or defined by a file that binds no ``__all__`` (a test's fake
    library) or whose names are not told."""
    if name in spelt or _is_submodule(library, folder, name):
        return True
    definers = [path for path in library.files_defining(name) if path.startswith(f"{folder}/")]
    if any("__all__" not in (library.bound_names(path) or ()) for path in definers):
        return True
    return _models_export(library, folder, name)


def _models_export(library: Library, folder: str, name: str) -> bool:
    """Whether a module of ``models/`` exports ``name`` (its ``__all__``, a decorated definition).
    The index of :func:`_models_exporters` says which modules to read: ``name`` is exported when the
    text of one of them, read (a rescan reads it again when it changes), exports it; otherwise the
    text of every module is read, since any of them may come to export it."""
    by_name, by_path = library.guide(("models exporters", folder), lambda: _models_exporters(library, folder))
    for path in by_name.get(name, ()):
        source = library.source(path) or ""
        indexed, exports = by_path[path]
        if name in (exports if source is indexed else _module_exports(path, source)):
            return True
    _once(library, _models_modules, folder)
    return False


def _answers(library: Library, folder: str, lazy: str, name: str) -> tuple[str, ...]:
    """The names the lazy module (its text ``lazy``) answers ``name`` with when it lacks it: 2026's
    ``XTokenizerFast`` and ``XImageProcessorFast`` by the name without ``Fast``, a tokenizer by the
    tokenizers of its converter in ``SLOW_TO_FAST_CONVERTERS`` (``LEDTokenizer`` by ``BartTokenizer``:
    both use ``RobertaConverter``), the converter's own first."""
    found = [name[:-4] for end in _FAST_ENDINGS if f'name.endswith("{end}")' in lazy and name.endswith(end)]
    if "SLOW_TO_FAST_CONVERTERS" in lazy and name.endswith(("Tokenizer", "TokenizerFast")):
        converters = _once(library, _converters, folder)
        wanted = name.removesuffix("Fast")
        converter = converters.get(wanted)
        if converter is not None:
            found.append(f"{converter.removesuffix('Converter')}Tokenizer")
            found += [other for other, used in converters.items() if used == converter and other != wanted]
    return tuple(found)


def _converters(library: Library, folder: str) -> dict[str, str]:
    """``SLOW_TO_FAST_CONVERTERS`` of ``convert_slow_tokenizer.py``: tokenizer name -> converter name."""
    source = library.source(f"{folder}/convert_slow_tokenizer.py") or ""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and [ast.unparse(target) for target in statement.targets] == ["SLOW_TO_FAST_CONVERTERS"]
            and isinstance(statement.value, ast.Dict)
        ):
            pairs = zip(statement.value.keys, statement.value.values, strict=True)
            return {
                key.value: value.id
                for key, value in pairs
                if isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and isinstance(value, ast.Name)
            }
    return {}


def top_module_failure(library: Library, folder: str, module: str, taken: tuple[str, ...] = ()) -> str | None:
    """Python's error for ``from module import`` the names ``taken`` (``import module`` when none)
    when the module at the package's top that ``module`` names does not exist (no file, no package,
    no alias the lazy ``__init__.py`` spells: ``tokenization_utils_fast``), or when ``module`` is a
    module file at the top (``transformers.activations``) that binds none of a name of ``taken``
    (``parse/bound_names.py``); None when neither is sure."""
    package, _, rest = module.partition(".")
    top, _, deeper = rest.partition(".")
    if not top or package != folder.rpartition("/")[2]:
        return None
    kind = library.fact(_top_module_kind, folder, top)
    if kind == _MISSING:
        return no_module(f"{package}.{top}")
    if kind != _FILE or deeper or not taken:
        return None
    return library.fact(_top_module_lacks, folder, top, taken)


def _top_module_kind(library: Library, folder: str, top: str) -> str:
    """What ``<package>.<top>`` is: a package, a module file, missing, or other (an alias the lazy
    ``__init__.py`` may make, or a package that is no lazy module)."""
    if library.exists(f"{folder}/{top}/__init__.py"):
        return _PACKAGE  # Python's order: a package, a module file, a folder (a namespace package)
    if library.exists(f"{folder}/{top}.py"):
        return _FILE
    if library.root is not None and (library.root / folder / top).is_dir():
        return _PACKAGE
    spelt = _once(library, _init_words, folder)
    return _OTHER if spelt is None or top in spelt else _MISSING


def _top_module_lacks(library: Library, folder: str, top: str, taken: tuple[str, ...]) -> str | None:
    bound = library.memoized(
        ("top module names", folder, top), lambda: _bound_names(library, f"{folder}/{top}.py")
    )
    missing = next((name for name in taken if name != "*" and name not in bound), None) if bound else None
    return None if missing is None else cannot_import(missing, f"{folder.rpartition('/')[2]}.{top}")


def _bound_names(library: Library, path: str) -> frozenset[str] | None:
    """The names module file ``path`` binds, None when not told (or it does not parse)."""
    source = library.source(path) or ""
    try:
        bound = bound_names(ast.parse(source).body, source)
    except SyntaxError:
        return None  # the module's own error, not looked at
    return None if bound is None else frozenset(bound)


def _init_words(library: Library, folder: str) -> frozenset[str] | None:
    """The names spelt in the package's lazy ``__init__.py`` (identifiers and the words of its
    strings), or None when it is no lazy module or does not parse."""
    source = library.source(f"{folder}/__init__.py")
    if source is None or "_LazyModule" not in source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.update(_WORD.findall(node.value))
        elif isinstance(node, ast.alias):
            words.update(_WORD.findall(node.asname or node.name))
        elif isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words.add(node.name)
    return frozenset(words)


def _is_submodule(library: Library, folder: str, name: str) -> bool:
    """Whether ``name`` is a module or package of the package (Python imports it by name)."""
    return library.fact(_top_module_kind, folder, name) in (_PACKAGE, _FILE)


def _models_modules(library: Library, folder: str) -> tuple[str, ...]:
    """The module files of ``models/`` that ``define_import_structure`` may read, each file's text
    read: what a name none of them exports depends on (a module that comes, or one that starts to
    export it)."""
    paths = tuple(path for path in library.listing(f"{folder}/models") if not path.endswith("/__init__.py"))
    for path in paths:
        library.source(path)
    return paths


def _models_exporters(
    library: Library, folder: str
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, frozenset[str]]]]:
    """(name -> the module files of ``models/`` exporting it, in the listing's order; path -> (the
    text read, the names it exports)): an index built once from every file's text (a guide: its
    reads are not recorded; the text a name's answer reads is the one indexed, the same object)."""
    by_name: dict[str, list[str]] = {}
    by_path: dict[str, tuple[str, frozenset[str]]] = {}
    for path in library.listing(f"{folder}/models"):
        if not path.endswith("/__init__.py"):
            source = library.source(path) or ""
            by_path[path] = (source, frozenset(_module_exports(path, source)))
            for name in by_path[path][1]:
                by_name.setdefault(name, []).append(path)
    return {name: tuple(paths) for name, paths in by_name.items()}, by_path


def _module_exports(path: str, source: str) -> set[str]:
    """The names ``define_import_structure`` may export from module file ``path`` (its text
    ``source``): those its ``__all__`` lists, or every class and function of a file with a
    ``@requires``/``@export`` definition; none from the files it leaves out."""
    if path.rpartition("/")[2].startswith(_NOT_READ_BY_THE_LAZY_MODULE):
        return set()
    exports: set[str] = set()
    for listed in _ALL.findall(source) if "__all__" in source else ():
        exports.update(_QUOTED.findall(listed))
    if ("@requires" in source or "@export" in source) and _DECORATED.search(source):
        exports.update(_DEFINED.findall(source))
    return exports


def _dummy_paths(library: Library, folder: str) -> tuple[str, ...]:
    utils = f"{folder}/utils"
    return tuple(path for path in library.listing(utils) if path.startswith(f"{utils}/dummy_"))
