"""The candidate model named on the command line: ``package.module:name``, ``script.py:name`` or ``script.py``.

``name`` (``build_model`` when a script is given alone) is an ``nn.Module`` or a callable taking no
argument that returns one. The script or module is loaded by :mod:`model_debugging.script_loading`
(a real module, its folder importable for the whole run). It may also define ``REPLAY_ADAPTERS``
(see :mod:`model_debugging.replay.adapters`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType

from torch import nn

from model_debugging.replay.adapters import AdapterSpec
from model_debugging.script_loading import ScriptError, loaded_script, raised_by

DEFAULT_FACTORY = "build_model"
ADAPTERS_NAME = "REPLAY_ADAPTERS"


@dataclass(frozen=True)
class Candidate:
    """The model ``--model`` names, and the argument adapters its module defines (None when it defines none)."""

    model: nn.Module
    adapters: AdapterSpec


def script_of(spec: str) -> str:
    """The file or module part of a ``--model`` value."""
    return spec.rpartition(":")[0] if ":" in spec else spec


@contextmanager
def loaded_candidate(spec: str) -> Iterator[Candidate]:
    """The candidate ``spec`` names (see the module docstring), usable until the ``with`` block ends."""
    location, _, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if not location.endswith(".py") and not (location and attribute):
        raise ScriptError(
            f"--model {spec!r}: expected 'package.module:name', 'script.py:name' or 'script.py'"
        )
    with loaded_script(location) as module:
        model = _model_of(module, location, attribute or DEFAULT_FACTORY)
        yield Candidate(model, getattr(module, ADAPTERS_NAME, None))


def _model_of(module: ModuleType, location: str, attribute: str) -> nn.Module:
    value = getattr(module, attribute, None)
    if value is None:
        raise ScriptError(f"{location} defines no {attribute!r}")
    if not isinstance(value, nn.Module):
        if not callable(value):
            raise ScriptError(
                f"{location}:{attribute} is a {type(value).__name__}, not a model or a function"
            )
        try:
            value = value()
        except Exception as error:
            where = raised_by(value, error, location)
            raise ScriptError(f"{where}: {attribute}() raised {type(error).__name__}: {error}") from None
    if not isinstance(value, nn.Module):
        raise ScriptError(f"{location}:{attribute} gave a {type(value).__name__}, not a torch.nn.Module")
    return value
