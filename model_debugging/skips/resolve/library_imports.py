"""Whether importing a module of the library fails because a module or name it imports is missing.

Python runs a module's imports in order, each module once, each running its own imports first. The
first import naming a module the checkout's ``src/`` does not have raises ``ModuleNotFoundError:
No module named '<module>'``; a ``from module import name`` whose module ran but binds no such name
raises ``ImportError: cannot import name '<name>' from '<module>'`` (what pytest reports). Only
certain failures are told: an import counts when it always runs, at module level, in the body of
``if is_torch_available():`` (the tests run with torch) or the ``else`` of ``if TYPE_CHECKING:``;
not in a function, a ``try`` block or any other ``if``. The files followed are those the library
reader lists whenever they exist (the models' modeling and configuration files, the shared files,
and a helper module of a model's folder its modeling file imports as ``from .vision import ...``:
``parse/library/load.py``), and a missing module is told when it would be one of them (``from
.configuration_mistral import ...`` in a copied model's folder): their presence is part of what a
warm scan checks, so no other file is read again to answer it. A missing name is told in a file the
reader holds when it could tell every name the file binds (``parse/bound_names.py``). Of the other
modules, only those at the package's top are looked at (``resolve/package_exports.py``): one that
does not exist (``transformers.activations_x``) and a name a top-level module file does not bind
(``from transformers.activations import NoSuch``); sub-packages (``utils/``) are not.

A test file's ``from transformers import X`` imports the library module defining ``X`` (the
package's lazy ``__init__`` imports it when ``X`` is asked for): the library's index of class names
says which; a name defined in several files fails only when every one of them does. Whether the
lazy ``__init__`` has ``X`` at all is ``resolve/package_exports.py``'s: a name it surely lacks fails
the import, one it may lack leaves the file's tests undecided (:func:`library_import_doubt`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from model_debugging.skips.parse.always_imports import always_run_imports
from model_debugging.skips.parse.library.load import library_root, listed_as_sibling, listed_when_present
from model_debugging.skips.records.test_files import (
    CANNOT_IMPORT,
    STAR,
    ParsedFile,
    ParseError,
    cannot_import,
    no_module,
)
from model_debugging.skips.resolve.library import Library
from model_debugging.skips.resolve.package_exports import package_export, top_module_failure
from model_debugging.skips.source.files import read_source
from model_debugging.skips.source.modules import module_name
from model_debugging.skips.source.scanned_paths import LIBRARY_FOLDER


def _module_of(path: str) -> str:
    """``src/transformers/models/x/modeling_x.py`` -> ``transformers.models.x.modeling_x``."""
    return module_name(path.removeprefix(f"{LIBRARY_FOLDER}/"))


def _file_of(module: str) -> str:
    return f"{LIBRARY_FOLDER}/{module.replace('.', '/')}.py"


def _missing_part(library: Library, module: str) -> str:
    """The first of ``a``, ``a.b``, ``a.b.c`` that does not exist, as Python names it."""
    parts = module.split(".")
    for end in range(1, len(parts)):
        folder = library.root / LIBRARY_FOLDER / "/".join(parts[: end + 1])
        if not folder.is_dir() and not folder.with_suffix(".py").is_file():
            return ".".join(parts[: end + 1])
    return module


def package_of(library: Library) -> tuple[str, str] | None:
    """The library's package (``transformers``) and its folder (``src/transformers``), or None
    without library sources."""

    def find() -> tuple[str, str] | None:
        root = library_root(library.root) if library.root is not None else None
        return None if root is None else (root.name, f"{LIBRARY_FOLDER}/{root.name}")

    return library.memoized(("library package",), find)


def module_failure(library: Library, module: str) -> ParseError | None:
    """The error importing library module ``module`` meets first, as the entry of the file whose
    import names a missing module or name; None when none is certain (a fact: see the module doc)."""
    return library.fact(_first_missing, module)


def _first_missing(library: Library, module: str) -> ParseError | None:
    package, folder = package_of(library)
    done: set[str] = set()
    # depth first, as Python runs them: (module, the file whose import names it, that import's line,
    # the names it takes, False) to run the module, then (..., True) once it has run
    pending: list[tuple[str, str | None, int, tuple[str, ...], bool]] = [(module, None, 0, (), False)]
    while pending:
        name, importer, line, taken, ran = pending.pop()
        path = _file_of(name)
        if ran:
            message = _missing_name_message(library, name, path, taken)
            if message is not None:
                return ParseError(importer, line, f"{CANNOT_IMPORT}{message}")
            continue
        if name in done:
            continue
        if not (listed_when_present(path, folder) or _sibling_written(library, path, importer, taken)):
            message = top_module_failure(library, folder, name) if importer is not None else None
            if message is not None:
                return ParseError(importer, line, f"{CANNOT_IMPORT}{message}")
            continue
        done.add(name)
        if not library.exists(path):
            if importer is None:
                return None  # the module asked for: its importer's to tell
            message = _missing_module_message(library, name, path)
            if message is None:
                continue  # a package of that name: not looked at
            return ParseError(importer, line, f"{CANNOT_IMPORT}{message}")
        runs = [
            run
            for target, target_line, names in library.always_imports(path)
            if target.split(".")[0] == package
            for run in ((target, path, target_line, names, False), (target, path, target_line, names, True))
        ]
        pending += reversed(runs)
    return None


def _sibling_written(library: Library, path: str, importer: str | None, taken: tuple[str, ...]) -> bool:
    """Whether module file ``path`` is one the library reader lists whenever it exists because its
    modeling file ``importer`` imports ``taken`` from it as ``from .<module> import ...``."""
    if importer is None or not listed_as_sibling(path, package_of(library)[1], importer):
        return False
    written = "." + path.rpartition("/")[2].removesuffix(".py")
    return any(library.imported_from(importer, name) == written for name in taken)


def _missing_name(library: Library, path: str, taken: tuple[str, ...]) -> str | None:
    """The first of ``taken`` that the library module file ``path`` does not bind, when told (a
    file the library reader holds)."""
    bound = library.bound_names(path) if taken else None
    if bound is None or (library.root / path.removesuffix(".py")).is_dir():
        return None  # not told, or a package of that name is what Python imports
    return next((name for name in taken if name != STAR and name not in bound), None)


@dataclass(frozen=True)
class LibraryImportFailure:
    """A test file's import of the library that fails: ``line`` is the test file's import statement,
    ``imported`` the library module it runs, ``cause`` the entry of the file whose import names a
    missing module or name (the test file's own when its import does)."""

    line: int
    imported: str
    cause: ParseError


def library_import_failure(library: Library, parsed: ParsedFile) -> LibraryImportFailure | None:
    """The first always-run import of the library by the test file ``parsed`` that fails, or None.
    Its text is read only when one of its imports (wherever written) fails or imports a submodule of
    the library by its dotted name. Once per file and imports: each model's evaluation asks again
    for the files it imports (the common test files, its own)."""
    key = ("library import failure", parsed.path, parsed.imports)
    return library.memoized(key, lambda: _library_import_failure(library, parsed))


def _read_package(library: Library) -> str | None:
    """The library's package name (``transformers``), None when its folder is not read."""
    found = package_of(library)
    return None if found is None or library.root is None else found[0]


def _library_import_failure(library: Library, parsed: ParsedFile) -> LibraryImportFailure | None:
    package = _read_package(library)
    if package is None:
        return None
    written = [item for item in parsed.imports if item.level == 0 and item.module.split(".")[0] == package]
    # `import transformers.models.x.modeling_x` is recorded as `import transformers`: read the text
    dotted = any(item.name is None and item.module == package for item in written)
    if not dotted and all(
        _failure(library, item.module, item.name, parsed.path, 0) is None for item in written
    ):
        return None
    for statement in _always_run_imports(library.root, parsed):
        if isinstance(statement, ast.Import):
            wanted = [(alias.name, None) for alias in statement.names]
        else:  # a relative import of a test file imports the tests' modules
            wanted = [
                (statement.module or "", alias.name) for alias in statement.names if not statement.level
            ]
        for module, name in wanted:
            failing = (
                _failure(library, module, name, parsed.path, statement.lineno)
                if module.split(".")[0] == package
                else None
            )
            if failing is not None:
                return LibraryImportFailure(statement.lineno, *failing)
    return None


def library_import_doubt(library: Library, parsed: ParsedFile) -> str | None:
    """Why an always-run ``from <package> import name`` of the test file ``parsed`` may fail: the
    package's lazy module may lack the name (``resolve/package_exports.py``: a class its modeling
    file leaves out of ``__all__``, a name spelt where no export reads it); None when none may. Its
    text is read only when one of its imports of the package (wherever written) is such a name."""
    key = ("library import doubt", parsed.path, parsed.imports)
    return library.memoized(key, lambda: _library_import_doubt(library, parsed))


def _library_import_doubt(library: Library, parsed: ParsedFile) -> str | None:
    package = _read_package(library)
    if package is None:
        return None
    if all(
        _doubt(library, item.name) is None
        for item in parsed.imports
        if item.level == 0 and item.module == package and item.name not in (None, STAR)
    ):
        return None
    for statement in _always_run_imports(library.root, parsed):
        if isinstance(statement, ast.ImportFrom) and not statement.level and statement.module == package:
            for alias in statement.names:
                because = _doubt(library, alias.name)
                if because is not None:
                    return f"{parsed.path}, line {statement.lineno}: {because}"
    return None


def _doubt(library: Library, name: str) -> str | None:
    """Why ``from <package> import name`` may fail, or None (see :func:`library_import_doubt`)."""
    if name == STAR:
        return None
    unexported = package_export(library, package_of(library)[1], name)
    return None if unexported is None or unexported.missing else unexported.because


def _always_run_imports(root: Path, parsed: ParsedFile) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of the test file ``parsed`` that always run (none when it cannot be
    read or parsed: the file's own error is told by its record)."""
    try:
        tree = ast.parse(read_source(root / parsed.path))
    except (OSError, SyntaxError, ValueError):
        return iter(())
    return always_run_imports(tree.body)


def _failure(
    library: Library, module: str, name: str | None, importer: str, line: int
) -> tuple[str, ParseError] | None:
    """(the library module that fails, its error) for ``from module import name`` (``import module``
    when ``name`` is None) written at ``line`` of file ``importer``, or None."""
    failure = module_failure(library, module)
    if failure is not None:
        return module, failure
    own = _first_missing_in(library, module, (name,) if name is not None else ())
    if own is not None:
        return module, ParseError(importer, line, f"{CANNOT_IMPORT}{own}")
    if name is None or name == STAR:
        return None
    folder = f"{LIBRARY_FOLDER}/{module.replace('.', '/')}/"
    definers = [path for path in library.files_defining(name) if path.startswith(folder)]
    failures = [(_module_of(path), module_failure(library, _module_of(path))) for path in definers]
    if failures and all(failure is not None for _, failure in failures):
        return failures[0]
    package, package_folder = package_of(library)
    if module == package:
        unexported = package_export(library, package_folder, name)
        if unexported is not None and unexported.missing:
            return module, ParseError(importer, line, f"{CANNOT_IMPORT}{cannot_import(name, module)}")
    return None


def _first_missing_in(library: Library, module: str, taken: tuple[str, ...]) -> str | None:
    """What Python says when ``module`` itself is missing, or binds none of a name of ``taken``
    (a module the library reader lists whenever it exists), else None."""
    folder = package_of(library)[1]
    path = _file_of(module)
    if not listed_when_present(path, folder):
        return top_module_failure(library, folder, module, taken)
    if not library.exists(path):
        return _missing_module_message(library, module, path)
    return _missing_name_message(library, module, path, taken)


def _missing_module_message(library: Library, module: str, path: str) -> str | None:
    """Python's error for importing ``module``, whose file ``path`` does not exist; None when a
    package of that name does (packages are not looked at)."""
    if (library.root / path.removesuffix(".py")).is_dir():
        return None
    return no_module(_missing_part(library, module))


def _missing_name_message(library: Library, module: str, path: str, taken: tuple[str, ...]) -> str | None:
    """Python's error for ``from module import`` the names ``taken`` when the file ``path`` lacks one."""
    missing = _missing_name(library, path, taken)
    return None if missing is None else cannot_import(missing, module)
