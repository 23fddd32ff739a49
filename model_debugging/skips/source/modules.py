"""Module names of a checkout's files, and the modules a parsed file imports from."""

from __future__ import annotations

from model_debugging.skips.records.test_files import ParsedFile


def module_name(path: str) -> str:
    """``tests/models/x/test_modeling_x.py`` -> ``tests.models.x.test_modeling_x``."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def absolute_module(current: str, is_package: bool, module: str, level: int) -> str:
    """The absolute dotted name a (possibly relative) import in module ``current`` refers to."""
    if level == 0:
        return module
    package = current.split(".") if is_package else current.split(".")[:-1]
    package = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*package, module] if module else package)


def imported_modules(parsed: ParsedFile) -> set[str]:
    """Absolute names of modules (and ``module.name`` candidates) that ``parsed`` imports from."""
    current = module_name(parsed.path)
    is_package = parsed.path.endswith("__init__.py")
    names = set()
    for item in parsed.imports:
        target = absolute_module(current, is_package, item.module, item.level)
        names.add(target)
        if item.name is not None:
            names.add(f"{target}.{item.name}")
    return names
