"""The line of the import statement by which a test file imports a module: where pytest's collection
error points when that import fails. Read only for files whose import fails, so never on a
checkout that imports cleanly."""

from __future__ import annotations

import ast

from model_debugging.skips.source.modules import absolute_module, module_name


def import_line(source: str | bytes, path: str, module: str) -> int:
    """The first line of ``source`` (the text of ``path``) that imports ``module`` (absolute, dotted),
    or one of its names as a submodule; 1 when none does."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return 1
    current, package = module_name(path), path.endswith("__init__.py")
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name == module for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = absolute_module(current, package, node.module or "", node.level)
            if target == module or any(f"{target}.{alias.name}" == module for alias in node.names):
                lines.append(node.lineno)
    return min(lines, default=1)
