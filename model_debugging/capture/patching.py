"""Apply the registered class replacements: to module namespaces (`apply_patches`) and to recorders."""

from __future__ import annotations

import dataclasses
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import MappingProxyType, ModuleType

from torch import nn

from model_debugging.capture.recorder import OutputRecorder, is_foreign_recorder
from model_debugging.capture.registry import PatchRules, current_patch_rules
from model_debugging.capture.swap_ledger import SwapLedger

__all__ = [
    "DEFAULT_PATCH_NAMESPACES",
    "apply_patches",
    "get_patch_namespaces",
    "patch_output_recorders",
    "register_patch_namespace",
    "unregister_patch_namespace",
]

# transformers itself and the modules it loads remote code into
DEFAULT_PATCH_NAMESPACES = ("transformers", "transformers_modules")

_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_namespaces_lock = threading.Lock()
_registered_namespaces: list[str] = []
# Swapping and restoring walk and mutate shared modules; one context at a time does it.
_ledger = SwapLedger()


def register_patch_namespace(name: str) -> None:
    """Make `apply_patches` also patch the package ``name`` and its submodules (idempotent)."""
    _check_namespace(name)
    with _namespaces_lock:
        if name not in _registered_namespaces and name not in DEFAULT_PATCH_NAMESPACES:
            _registered_namespaces.append(name)


def unregister_patch_namespace(name: str) -> None:
    """Stop patching a namespace added with `register_patch_namespace`; anything else raises `KeyError`."""
    with _namespaces_lock:
        if name not in _registered_namespaces:
            raise KeyError(
                f"{name!r} is not a registered patch namespace; registered: {_registered_namespaces}"
            )
        _registered_namespaces.remove(name)


def get_patch_namespaces() -> tuple[str, ...]:
    """The packages `apply_patches` patches by default: `DEFAULT_PATCH_NAMESPACES` plus registered ones."""
    with _namespaces_lock:
        return (*DEFAULT_PATCH_NAMESPACES, *_registered_namespaces)


def _check_namespace(name: str) -> None:
    if not isinstance(name, str) or not _DOTTED_NAME.fullmatch(name):
        raise ValueError(f"a patch namespace is a dotted module name like 'my_pkg.models', got {name!r}")


@contextmanager
def apply_patches(namespaces: Iterable[str] = ()) -> Iterator[MappingProxyType]:
    """Swap registered replacements into module namespaces for the duration of the block.

    In every loaded module of the patch namespaces (`get_patch_namespaces()` plus ``namespaces``, each
    meaning the package and its submodules), each module-level attribute holding an `nn.Module`
    subclass whose attribute name matches the registry (as in transformers; ``Linear`` bound as
    ``Dense`` is matched as ``Dense``) is set to its replacement. Code that looks the
    class up in its module at call time, like a layer's ``__init__`` building ``LlamaMLP(config)``,
    builds the replacement. On exit, also on error, every swapped attribute gets back the exact object
    it held. Modules first imported inside the block are not patched: import them before.

    Nested contexts patch on top of the current state, so inner blocks may add replacements and the
    outer ones stay in effect until the outer block ends. Blocks may be closed in any order (e.g. two
    ``ExitStack``s): each takes back only its own swaps, and once all are closed every attribute holds
    its original object again.
    Patching changes process-wide state: other threads see the swapped classes while the block runs.

    Args:
        namespaces (`Iterable[str]`, *optional*): extra packages to patch in this block only.

    Yields:
        A read-only mapping ``"module.attribute" -> (original, replacement)`` of what was swapped.

    Example:
        ```python
        register_patch_mapping({"LlamaMLP": MyMLP})
        with apply_patches() as swapped:
            model = LlamaModel(config)  # its layers use MyMLP
        patch_output_recorders(model)
        ```
    """
    for name in namespaces:
        _check_namespace(name)
    roots = (*get_patch_namespaces(), *namespaces)
    rules = current_patch_rules()
    block = object()  # this block's identity in the ledger
    swapped: dict[str, tuple[type, type]] = {}
    try:
        if rules:
            _swap(block, roots, rules, swapped)
        yield MappingProxyType(swapped)
    finally:
        _ledger.release(block)


def _in_namespaces(module_name: str, roots: tuple[str, ...]) -> bool:
    return any(module_name == root or module_name.startswith(f"{root}.") for root in roots)


def _swap(block: object, roots: tuple[str, ...], rules: PatchRules, swapped: dict) -> None:
    with _ledger.lock:
        for module in list(sys.modules.values()):
            module_name = getattr(module, "__name__", None)
            if not isinstance(module, ModuleType) or not isinstance(module_name, str):
                continue
            if not _in_namespaces(module_name, roots):
                continue
            # vars(), not dir(): never trigger a lazy module's imports
            for attribute, value in list(vars(module).items()):
                if not (isinstance(value, type) and issubclass(value, nn.Module)):
                    continue
                # keys match the name the module binds, like transformers: an alias is patched under its alias
                replacement = rules.replacement_for(attribute)
                if replacement is None:
                    continue
                # recorded even when an outer block already put the same class there: this block keeps
                # it in place if the outer one closes first
                _ledger.swap(block, module, attribute, replacement)
                if replacement is not value:
                    swapped[f"{module_name}.{attribute}"] = (value, replacement)


def patch_output_recorders(model: nn.Module) -> None:
    """Point the recorders of ``model`` and its sub-models at the registered replacement classes.

    A model built inside `apply_patches` contains replacement modules, but the ``_can_record_outputs``
    of its class still names the originals, so nothing would be recorded from them. This sets, on
    each affected instance, a patched copy of its declaration (plain classes, class names and
    `OutputRecorder` targets matched by class name); the class attribute and other instances are
    left untouched. The next capture installs its hooks from the copy.
    """
    rules = current_patch_rules()
    if not rules:
        return
    for module in model.modules():
        declared = getattr(module, "_can_record_outputs", None)
        if not declared:
            continue
        patched = {field: _patch_declared(value, rules) for field, value in declared.items()}
        if patched != declared:
            module._can_record_outputs = patched


def _patch_declared(declared, rules: PatchRules):
    if isinstance(declared, (list, tuple)):
        return type(declared)(_patch_declared(item, rules) for item in declared)
    if isinstance(declared, OutputRecorder) or is_foreign_recorder(declared):
        name = declared.target_class.__name__ if declared.target_class is not None else declared.class_name
        replacement = rules.replacement_for(name)
        return declared if replacement is None else dataclasses.replace(declared, target_class=replacement)
    if isinstance(declared, type):
        return rules.replacement_for(declared.__name__) or declared
    if isinstance(declared, str):
        return rules.replacement_for(declared) or declared
    return declared
