"""A user's Python file or module, loaded for a command: ``debug-port SCRIPT``, ``replay --model``.

A ``.py`` file is loaded as a real module, as ``python script.py`` would see it: registered in
``sys.modules`` under its file name (so that functions and classes it defines can be found by name,
and a neighbour importing it gets the same module), with its folder first on ``sys.path`` until the
``with`` block ends (so that it, and functions called later, can import sibling files). A dotted
name is imported with the current folder first on ``sys.path``, as ``python -m`` would. Both are
undone when the block ends, and so are the modules first imported from that folder meanwhile (a
sibling ``my_port.py`` the script imports; not a submodule of a package loaded before, nor a package
installed in a virtual environment inside that folder): a later run in the same process, of another
folder's files or of edited ones, imports them afresh. Modules imported from elsewhere stay loaded.

A file that cannot be loaded is a :class:`ScriptError` of one line naming it, and the line of the
file the error came from (a syntax error, an exception raised at import).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

# the folders installed packages live in: what a script imports from them stays loaded
_INSTALLED = frozenset({"site-packages", "dist-packages"})


class ScriptError(ValueError):
    """A user's file or module is missing, cannot be loaded, or lacks what the command needs."""


def _where_raised(error: BaseException, path: Path, shown: str) -> str:
    """``shown`` (the file ``path`` as the user named it), with the line of ``path`` that ``error``
    was raised from (the deepest one in its traceback; a syntax error's own line): ``port.py, line 12``."""
    line = error.lineno if isinstance(error, SyntaxError) and _same_file(error.filename, path) else None
    if line is None:
        frames = [
            frame for frame in traceback.extract_tb(error.__traceback__) if _same_file(frame.filename, path)
        ]
        line = frames[-1].lineno if frames else None
    return f"{shown}, line {line}" if line else shown


def raised_by(function: Callable, error: BaseException, script: str) -> str:
    """Where ``function`` (found in the user's ``script``) raised ``error``: the file that defines
    it (``script`` itself, as given) and the line of that file, as :func:`_where_raised` says."""
    try:
        path = Path(inspect.getfile(function))
    except TypeError:  # a built-in or a callable object: no file to point at
        return script
    return _where_raised(error, path, script if _same_file(script, path) else str(path))


def _same_file(filename: str | None, path: Path) -> bool:
    return filename is not None and Path(filename).resolve() == path.resolve()


def _module_name(path: Path) -> str:
    """The file name as module name, unless another module already has it."""
    if path.stem.isidentifier() and path.stem not in sys.modules:
        return path.stem
    return f"_model_debugging_script_{path.stem}"


def _load_file(path: Path, shown: str) -> ModuleType:
    if not path.is_file():
        raise ScriptError(f"{shown}: no such file")
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        own_syntax = isinstance(error, SyntaxError) and _same_file(error.filename, path)
        what = error.msg if own_syntax else error  # its file and line are said first
        raise ScriptError(
            f"{_where_raised(error, path, shown)}: importing it raised {type(error).__name__}: {what}"
        ) from None
    return module


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as error:
        raise ScriptError(f"cannot import {name!r}: {type(error).__name__}: {error}") from None


@contextmanager
def loaded_script(spec: str) -> Iterator[ModuleType]:
    """The module ``spec`` names (a ``.py`` file or a dotted module name), usable until the ``with``
    block ends (see the module docstring); raises :class:`ScriptError`."""
    path = Path(spec) if spec.endswith(".py") else None
    saved_path, loaded_before = list(sys.path), set(sys.modules)
    folder = (path.parent if path is not None else Path.cwd()).resolve()
    sys.path.insert(0, str(folder))
    module = None
    try:
        module = _load_file(path, spec) if path is not None else _import(spec)
        yield module
    finally:
        sys.path[:] = saved_path
        if path is not None and module is not None and sys.modules.get(module.__name__) is module:
            del sys.modules[module.__name__]  # a later run may load another script of that name
        for name in set(sys.modules) - loaded_before:
            # a submodule of a package loaded before (this project, torch) stays: one copy of it
            if name.partition(".")[0] not in loaded_before and _defined_in(sys.modules.get(name), folder):
                del sys.modules[name]


def _defined_in(module: ModuleType | None, folder: Path) -> bool:
    """Whether ``module`` was loaded from a source file of the user's under ``folder``: not from an
    installed package (a virtual environment inside the project folder is not the user's code)."""
    filename = getattr(module, "__file__", None)
    if filename is None:
        return False
    path = Path(filename).resolve()
    return path.is_relative_to(folder) and not _INSTALLED.intersection(path.relative_to(folder).parts)
