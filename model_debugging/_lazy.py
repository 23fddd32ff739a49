"""PEP 562 lazy exports: a package names its public objects without importing their modules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable, Callable]:
    """Return ``(__getattr__, __dir__)`` for ``package``, whose name ``X`` comes from module ``exports[X]``.

    A module name starting with '.' is relative to ``package``. The first access imports the module
    and caches the object in the package's namespace.
    """
    namespace = import_module(package).__dict__

    def __getattr__(name: str):
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module_name, package), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
