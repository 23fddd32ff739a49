"""The candidate model named on the command line: ``package.module:name``, ``script.py:name`` or ``script.py``.

``name`` (``build_model`` when a script is given alone) is an ``nn.Module`` or a callable taking no
argument that returns one. A script is run as a module of its own, with its directory first on
``sys.path`` so that it can import its neighbours.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from torch import nn

DEFAULT_FACTORY = "build_model"


class ModelLoadError(ValueError):
    """The ``--model`` value names nothing usable; the message says what and why."""


def _script_module(path: Path) -> ModuleType:
    if not path.is_file():
        raise ModelLoadError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"_model_debugging_replay_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise ModelLoadError(f"{path}: running it raised {type(error).__name__}: {error}") from None
    finally:
        sys.path.remove(str(path.parent.resolve()))
    return module


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as error:
        raise ModelLoadError(f"cannot import {name!r}: {type(error).__name__}: {error}") from None


def load_model(spec: str) -> nn.Module:
    """The candidate model ``spec`` names (see the module docstring)."""
    location, separator, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if location.endswith(".py"):
        module = _script_module(Path(location))
        attribute = attribute or DEFAULT_FACTORY
    elif separator and location and attribute:
        module = _import(location)
    else:
        raise ModelLoadError(
            f"--model {spec!r}: expected 'package.module:name', 'script.py:name' or 'script.py'"
        )
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
