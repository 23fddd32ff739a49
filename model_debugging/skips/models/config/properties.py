"""Parts a configuration computes in a property (``config.encoder_config``), read from its source.

A configuration may hand a part of itself to a constructor without declaring it in ``sub_configs``:
``@property def encoder_config(self): return XEncoderConfig(**self.to_dict())``. Its class is the
one the property's only ``return`` builds, whatever the values.
"""

from __future__ import annotations

import ast

from model_debugging.skips.models.base_classes import is_configuration
from model_debugging.skips.models.generation_cache.model_outputs import parsed_file
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library


def property_part(library: Library, config: LibraryClass, name: str) -> LibraryClass | None:
    """The configuration class property ``name`` of ``config`` returns when its body ends with its
    only ``return``, of ``XConfig(...)``; None for anything else."""
    owner = library.defines(config, name)
    path = library.path_of(owner) if owner is not None else None
    tree = parsed_file(library, path) if path is not None else None
    node = next(
        (
            item
            for item in (tree.body if tree else ())
            if isinstance(item, ast.ClassDef) and item.name == owner.name
        ),
        None,
    )
    method = next(
        (
            item
            for item in (node.body if node else ())
            if isinstance(item, ast.FunctionDef) and item.name == name
        ),
        None,
    )
    if method is None or [ast.unparse(item) for item in method.decorator_list] != ["property"]:
        return None
    returns = [item for item in ast.walk(method) if isinstance(item, ast.Return)]
    last = method.body[-1]
    returned = last.value if returns == [last] else None  # what comes before changes values only
    if not isinstance(returned, ast.Call) or not isinstance(returned.func, ast.Name):
        return None
    found = library.find(returned.func.id, path)
    return found if found is not None and is_configuration(library, found) else None
