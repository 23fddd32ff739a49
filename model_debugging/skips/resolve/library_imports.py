"""Whether importing a module of the library fails because a module it imports is missing.

Python runs a module's imports in order, each module once, each running its own imports first. The
first import naming a module the checkout's ``src/`` does not have raises ``ModuleNotFoundError:
No module named '<module>'`` (what pytest reports). Only certain failures are told: an import
counts when it always runs, at module level, in the body of ``if is_torch_available():`` (the tests
run with torch) or the ``else`` of ``if TYPE_CHECKING:``; not in a function, a ``try`` block or any
other ``if``. The files followed are those the library reader lists whenever they exist (the
models' modeling and configuration files, the shared files: ``parse/library/load.py``), and a
missing module is told when it would be one of them (``from .configuration_mistral import ...`` in
a copied model's folder): their presence is part of what a warm scan checks, so no other file is
read again to answer it. Packages, other modules, and a missing name in a module that exists are
not looked at.

A test file's ``from transformers import X`` imports the library module defining ``X`` (the
package's lazy ``__init__`` imports it when ``X`` is asked for): the library's index of class names
says which; a name defined in several files fails only when every one of them does.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from model_debugging.skips.parse.always_imports import always_run_imports
from model_debugging.skips.parse.library.load import library_root, listed_when_present
from model_debugging.skips.records.test_files import CANNOT_IMPORT, STAR, ParsedFile, ParseError
from model_debugging.skips.resolve.library import Library
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
    import names a missing module; None when none is certain (a fact: see the module doc)."""
    return library.fact(_first_missing, module)


def _first_missing(library: Library, module: str) -> ParseError | None:
    package, folder = package_of(library)
    done: set[str] = set()
    # depth first, as Python runs them: (module, the file whose import names it, that import's line)
    pending: list[tuple[str, str | None, int]] = [(module, None, 0)]
    while pending:
        name, importer, line = pending.pop()
        path = _file_of(name)
        if name in done or not listed_when_present(path, folder):
            continue
        done.add(name)
        if not library.exists(path):
            if importer is None:
                return None  # the module asked for: its importer's to tell
            if (library.root / path.removesuffix(".py")).is_dir():
                continue  # a package of that name: not looked at
            return ParseError(
                importer, line, f"{CANNOT_IMPORT}No module named '{_missing_part(library, name)}'"
            )
        runs = [
            (target, path, target_line)
            for target, target_line in library.always_imports(path)
            if target.split(".")[0] == package
        ]
        pending += reversed(runs)
    return None


@dataclass(frozen=True)
class LibraryImportFailure:
    """A test file's import of the library that fails: ``line`` is the test file's import statement,
    ``imported`` the library module it runs, ``cause`` the entry of the library file whose import
    names a missing module."""

    line: int
    imported: str
    cause: ParseError


def library_import_failure(library: Library, parsed: ParsedFile) -> LibraryImportFailure | None:
    """The first always-run import of the library by the test file ``parsed`` that fails, or None.
    Its text is read only when one of its imports (wherever written) fails."""
    found = package_of(library)
    if found is None or library.root is None:
        return None
    package = found[0]
    written = (item for item in parsed.imports if item.level == 0 and item.module.split(".")[0] == package)
    if all(_failure(library, item.module, item.name) is None for item in written):
        return None
    try:
        tree = ast.parse(read_source(library.root / parsed.path))
    except (OSError, SyntaxError, ValueError):  # the file's own error is told by its record
        return None
    for statement in always_run_imports(tree.body):
        if isinstance(statement, ast.Import):
            wanted = [(alias.name, None) for alias in statement.names]
        else:  # a relative import of a test file imports the tests' modules
            wanted = [
                (statement.module or "", alias.name) for alias in statement.names if not statement.level
            ]
        for module, name in wanted:
            found = _failure(library, module, name) if module.split(".")[0] == package else None
            if found is not None:
                return LibraryImportFailure(statement.lineno, *found)
    return None


def _failure(library: Library, module: str, name: str | None) -> tuple[str, ParseError] | None:
    """(the library module that fails, its error) for ``from module import name`` (``import module``
    when ``name`` is None), or None."""
    failure = module_failure(library, module)
    if failure is not None:
        return module, failure
    if name is None or name == STAR:
        return None
    folder = f"{LIBRARY_FOLDER}/{module.replace('.', '/')}/"
    definers = [path for path in library.files_defining(name) if path.startswith(folder)]
    failures = [(_module_of(path), module_failure(library, _module_of(path))) for path in definers]
    if failures and all(failure is not None for _, failure in failures):
        return failures[0]
    return None
