"""Testers a model tester holds: ``self.text_model_tester = XTextModelTester(parent, **text_kwargs)``.

Composite testers (BLIP-2, InstructBLIP, Pix2Struct) build a part of their configuration with a
method of a tester they create in ``__init__`` (``text_config=self.text_model_tester.get_config()``).
The held tester's class is the one that call names, resolved in the holding tester's file; its
methods are looked up along its own MRO.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from model_debugging.skips.interp.values import source_expression
from model_debugging.skips.resolve.classes import ClassRef, Resolver


def method_along(
    resolver: Resolver, tester: ClassRef, sources: Callable[[str], ast.Module | None], method: str
) -> ast.FunctionDef | None:
    """The definition of ``method`` first found along the MRO of the tester class ``tester``."""
    return next((found for _, found in definitions_along(resolver, tester, sources, method) if found), None)


def definitions_along(
    resolver: Resolver, tester: ClassRef, sources: Callable[[str], ast.Module | None], method: str
) -> list[tuple[str, ast.FunctionDef | None]]:
    """``(class name, definition)`` of ``method`` for each class of the tester's MRO defining it, in
    MRO order; ``(class name, None)`` for a class whose source is not read (it may define one)."""
    found: list[tuple[str, ast.FunctionDef | None]] = []
    for ref in resolver.mro(tester):
        path = resolver.path_of(ref)
        tree = sources(path) if path else None
        node = (
            next(
                (item for item in tree.body if isinstance(item, ast.ClassDef) and item.name == ref.name),
                None,
            )
            if tree is not None
            else None
        )
        if node is None:
            found.append((ref.name, None))
            continue
        found.extend(
            (ref.name, item)
            for item in node.body
            if isinstance(item, ast.FunctionDef) and item.name == method
        )
    return found


def held_tester_method(
    resolver: Resolver,
    tester: ClassRef,
    sources: Callable[[str], ast.Module | None],
    tester_attribute: Callable[[str], object],
    dotted: str,
) -> ast.FunctionDef | None:
    """``"<attribute>.<method>"``: the method of the tester class whose instance the tester's
    ``<attribute>`` holds (None when the attribute is not such an instance or the class not read)."""
    holder, _, method = dotted.partition(".")
    node = source_expression(tester_attribute(holder))
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or tester.module is None:
        return None
    held = resolver.resolve(tester.module, node.func.id)
    return None if held.external else method_along(resolver, held, sources, method)
