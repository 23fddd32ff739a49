"""Function-level records: calls of chosen functions inside a module, recorded as children of that module.

``model_addition_debugger_context(model, record_functions=[...])`` accepts two kinds of names:

- a torch function by its full name, e.g. ``"torch.nn.functional.scaled_dot_product_attention"``
  or ``"torch.matmul"``: its calls are seen by a :class:`torch.overrides.TorchFunctionMode`
  active during the traced forward, wherever they come from;
- a bare name, e.g. ``"apply_rotary_pos_emb"`` or ``"eager_attention_forward"``: a Python function
  of that name in the Python module that defines one of the model's module classes. It is
  replaced there by a recording wrapper for the duration of the context (module code looks such
  helpers up in its module's globals at call time), and put back on exit.

A recorded call becomes a node whose ``module_path`` is the running module's path plus ``.`` plus
the function's short name, with the extra key ``"function"`` (the function's qualified name):
inputs and outputs are recorded like a leaf module's, except that an argument which is a module of
the traced model is recorded as the reference ``"<module PATH>"`` instead of its long repr (so that
replay can pass the candidate's module). Readers that do not know the key (upstream's) load the
file as before and see one more leaf.

Example::

    with model_addition_debugger_context(model, "trace", use_repr=False,
                                         record_functions=["apply_rotary_pos_emb"]):
        model(input_ids)
"""

from __future__ import annotations

import functools
import re
import sys
import types
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

# (short name, qualified name, a call of the function, args and kwargs as recorded) -> what it returned
RecordedCallRunner = Callable[[str, str, Callable[[], Any], tuple, dict], Any]
_MODULE_REFERENCE = re.compile(r"^<module (\S+)>$")


@dataclass(frozen=True)
class ModuleReference:
    """Stands for a module of the traced model among a recorded function's arguments; its repr is what is recorded."""

    path: str

    def __repr__(self) -> str:
        return f"<module {self.path}>"


def module_reference_path(text: str | None) -> str | None:
    """The module path of a recorded module reference, or None when ``text`` is not one."""
    match = _MODULE_REFERENCE.match(text) if text else None
    return match.group(1) if match else None


def resolve_torch_function(qualified_name: str) -> Callable | None:
    """The callable ``torch.a.b.c`` names, or None when the name is not a torch callable."""
    head, *parts = qualified_name.split(".")
    if head != "torch" or not parts:
        return None
    value: Any = torch
    for part in parts:
        value = getattr(value, part, None)
        if value is None:
            return None
    return value if callable(value) else None


def _qualified_name(function: Callable, fallback_module: str) -> str:
    module = getattr(function, "__module__", None) or fallback_module
    return f"{module}.{getattr(function, '__qualname__', function.__name__)}"


class _TorchFunctionRecorder(TorchFunctionMode):
    """Sends the calls of chosen torch functions through the recorder; torch disables the mode inside them."""

    def __init__(self, targets: dict[Callable, str], recorder: FunctionRecorder):
        super().__init__()
        self._targets = targets
        self._recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        qualified = self._targets.get(func)
        if qualified is None:
            return func(*args, **kwargs)
        return self._recorder.record(qualified.rpartition(".")[2], qualified, func, tuple(args), kwargs)


class FunctionRecorder:
    """Installs the function-level recording asked for by ``record_functions`` on one model.

    Args:
        model (`nn.Module`): the traced model; its module classes' Python modules are searched for bare names.
        names (`Sequence[str]`): torch functions by full name, or bare names of Python helpers.
        run (`RecordedCallRunner`): records one call as a child of the running module and returns its result.

    Raises:
        ValueError: a name is neither a torch function nor a function found in any of those modules.
    """

    def __init__(self, model: nn.Module, names: Sequence[str], run: RecordedCallRunner):
        self._run = run
        self._torch_targets: dict[Callable, str] = {}
        self._helper_names: list[str] = []
        for name in names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"record_functions: {name!r} is not a function name")
            if name.startswith("torch."):
                function = resolve_torch_function(name)
                if function is None:
                    raise ValueError(f"record_functions: {name!r} is not a torch function")
                self._torch_targets[function] = name
            else:
                self._helper_names.append(name)
        root = type(model).__name__
        self._module_paths = {
            id(module): f"{root}.{name}" if name else root for name, module in model.named_modules()
        }
        self._python_modules = _python_modules_of(model)
        self._replaced: list[tuple[types.ModuleType, str, Callable]] = []
        self._check_helpers_exist()

    def _check_helpers_exist(self) -> None:
        for name in self._helper_names:
            if not any(
                isinstance(getattr(module, name, None), types.FunctionType) for module in self._python_modules
            ):
                searched = ", ".join(sorted(module.__name__ for module in self._python_modules))
                raise ValueError(
                    f"record_functions: no Python function {name!r} in the modules defining the model's classes "
                    f"({searched}); give torch functions by full name, e.g. 'torch.matmul'"
                )

    def install(self) -> None:
        for module in self._python_modules:
            for name in self._helper_names:
                original = getattr(module, name, None)
                if isinstance(original, types.FunctionType):
                    qualified = _qualified_name(original, module.__name__)
                    setattr(module, name, self._wrap(name, qualified, original))
                    self._replaced.append((module, name, original))

    def uninstall(self) -> None:
        while self._replaced:
            module, name, original = self._replaced.pop()
            setattr(module, name, original)

    def torch_mode(self) -> AbstractContextManager:
        """The mode to enter around a traced forward (nothing when no torch function is recorded)."""
        if not self._torch_targets:
            return nullcontext()
        return _TorchFunctionRecorder(self._torch_targets, self)

    def record(self, name: str, qualified: str, function: Callable, args: tuple, kwargs: dict) -> Any:
        """Run ``function`` through the runner, with the model's modules among its arguments recorded as references."""
        shown_args = tuple(self._as_recorded(value) for value in args)
        shown_kwargs = {key: self._as_recorded(value) for key, value in kwargs.items()}
        return self._run(name, qualified, lambda: function(*args, **kwargs), shown_args, shown_kwargs)

    def _as_recorded(self, value: Any) -> Any:
        path = self._module_paths.get(id(value)) if isinstance(value, nn.Module) else None
        return value if path is None else ModuleReference(path)

    def _wrap(self, name: str, qualified: str, original: Callable) -> Callable:
        @functools.wraps(original)
        def recorded(*args, **kwargs):
            return self.record(name, qualified, original, args, kwargs)

        return recorded


def _python_modules_of(model: nn.Module) -> list[types.ModuleType]:
    """The Python modules defining the model's module classes (torch's own excluded), in first-use order."""
    found: dict[str, types.ModuleType] = {}
    for module in model.modules():
        name = type(module).__module__
        if name not in found and not name.startswith("torch.") and name in sys.modules:
            found[name] = sys.modules[name]
    return list(found.values())
