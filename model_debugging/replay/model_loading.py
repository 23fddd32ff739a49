"""The candidate model named on the command line: ``package.module:name``, ``script.py:name`` or ``script.py``.

``name`` (``build_model`` when a script is given alone) is an ``nn.Module`` or a callable taking no
argument that returns one. A script is loaded as a real module, as ``python script.py`` would see
it: registered in ``sys.modules`` under its file name (so that replay finds the functions it
defines, and a neighbour importing it gets the same module), with its directory first on
``sys.path`` for the whole run (so that ``build_model()`` can import a sibling file when called).
Both are undone when the run ends (the modules it imported stay loaded). The module may also define ``REPLAY_ADAPTERS`` (see
:mod:`model_debugging.replay.adapters`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from torch import nn

from model_debugging.replay.adapters import AdapterSpec

DEFAULT_FACTORY = "build_model"
ADAPTERS_NAME = "REPLAY_ADAPTERS"


class ModelLoadError(ValueError):
    """The ``--model`` value names nothing usable; the message says what and why."""


@dataclass(frozen=True)
class Candidate:
    """The model ``--model`` names, and the argument adapters its module defines (None when it defines none)."""

    model: nn.Module
    adapters: AdapterSpec


def _module_name(path: Path) -> str:
    """The script's file name as module name, unless another module already has it."""
    if path.stem.isidentifier() and path.stem not in sys.modules:
        return path.stem
    return f"_model_debugging_candidate_{path.stem}"


def _script_module(path: Path) -> ModuleType:
    if not path.is_file():
        raise ModelLoadError(f"{path}: no such file")
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise ModelLoadError(f"{path}: running it raised {type(error).__name__}: {error}") from None
    return module


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as error:
        raise ModelLoadError(f"cannot import {name!r}: {type(error).__name__}: {error}") from None


@contextmanager
def _run_scope(directory: Path) -> Iterator[None]:
    """``directory`` first on ``sys.path`` until the run ends."""
    saved_path = list(sys.path)
    sys.path.insert(0, str(directory.resolve()))
    try:
        yield
    finally:
        sys.path[:] = saved_path


@contextmanager
def loaded_candidate(spec: str) -> Iterator[Candidate]:
    """The candidate ``spec`` names (see the module docstring), usable until the ``with`` block ends."""
    location, separator, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "")
    script = Path(location) if location.endswith(".py") else None
    if script is None and not (separator and location and attribute):
        raise ModelLoadError(
            f"--model {spec!r}: expected 'package.module:name', 'script.py:name' or 'script.py'"
        )
    # the script's directory, or the current one for a module name, as `python script.py` / `python -m` do
    with _run_scope(script.parent if script is not None else Path.cwd()):
        if script is None:
            module = _import(location)
            yield Candidate(_model_of(module, location, attribute), getattr(module, ADAPTERS_NAME, None))
            return
        module = _script_module(script)
        try:
            model = _model_of(module, location, attribute or DEFAULT_FACTORY)
            yield Candidate(model, getattr(module, ADAPTERS_NAME, None))
        finally:
            if sys.modules.get(module.__name__) is module:
                del sys.modules[module.__name__]  # a later run may load another script of that name


def _model_of(module: ModuleType, location: str, attribute: str) -> nn.Module:
    value = getattr(module, attribute, None)
    if value is None:
        raise ModelLoadError(f"{location} defines no {attribute!r}")
    if not isinstance(value, nn.Module):
        if not callable(value):
            raise ModelLoadError(
                f"{location}:{attribute} is a {type(value).__name__}, not a model or a function"
            )
        try:
            value = value()
        except Exception as error:
            raise ModelLoadError(f"{location}:{attribute}() raised {type(error).__name__}: {error}") from None
    if not isinstance(value, nn.Module):
        raise ModelLoadError(f"{location}:{attribute} gave a {type(value).__name__}, not a torch.nn.Module")
    return value
