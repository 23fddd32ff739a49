"""``model.get_input_embeddings()`` on a symbolic instance, as the library computes it.

An override whose body is one ``return`` (``self.embeddings.patch_embeddings``,
``self.model.get_input_embeddings()``, ``None``) is followed attribute by attribute; the base
class's search (``EmbeddingAccessMixin``) is run as written there: the attribute named by
``_input_embed_layer``, then that attribute of ``self.embeddings`` or of ``self.model``, then the
base model's own answer, and ``NotImplementedError`` (:class:`Raised`) when the base model is the
instance itself. Any step only the run knows (an attribute whose value is not known, a method with
a longer body) makes the answer unknown.
"""

from __future__ import annotations

import ast

from model_debugging.skips.interp.values import ModelInstance, Raised, Unknown
from model_debugging.skips.models.base_classes import BASE_MODEL
from model_debugging.skips.models.test_class.context import TestClassFacts

_SEARCH_OWNER = "EmbeddingAccessMixin"
_METHOD = "get_input_embeddings"
_HOLDERS = ("embeddings", "model")  # where the search looks for the layer after the instance itself
_MAX_DEPTH = 4
_ABSENT = object()


def input_embeddings(facts: TestClassFacts, model: ModelInstance, unknown: Unknown) -> object:
    """The module ``model.get_input_embeddings()`` returns, None, or ``unknown``."""
    try:
        return _embeddings(facts, model, unknown, 0)
    except _Undecidable:
        return unknown


def _embeddings(facts: TestClassFacts, model: object, unknown: Unknown, depth: int) -> object:
    owner = facts.library.defines(model.info, _METHOD) if isinstance(model, ModelInstance) else None
    if owner is None or depth > _MAX_DEPTH:
        raise _Undecidable
    if owner.name == _SEARCH_OWNER:
        return _searched(facts, model, unknown, depth)
    source = dict(owner.returns).get(_METHOD)
    if source is None:
        raise _Undecidable
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == _METHOD:
        if node.args or node.keywords:
            raise _Undecidable
        return _embeddings(facts, _followed(facts, model, node.func.value, unknown), unknown, depth + 1)
    return _followed(facts, model, node, unknown)


def _followed(facts: TestClassFacts, model: ModelInstance, node: ast.expr, unknown: Unknown) -> object:
    """``self.a.b``: each name an attribute of the instance before it."""
    if isinstance(node, ast.Name) and node.id == "self":
        return model
    if not isinstance(node, ast.Attribute):
        raise _Undecidable
    value = _get(facts, _followed(facts, model, node.value, unknown), node.attr, unknown)
    if value is _ABSENT:
        raise _Undecidable  # an AttributeError: only the run shows what it does
    return value


def _searched(facts: TestClassFacts, model: ModelInstance, unknown: Unknown, depth: int) -> object:
    layer = facts.library.attribute(model.info, "_input_embed_layer")
    if not isinstance(layer, str):
        raise _Undecidable
    found = _get(facts, model, layer, unknown)
    if found is not _ABSENT and found is not None:
        return found
    for name in _HOLDERS:
        holder = _get(facts, model, name, unknown)
        if holder is _ABSENT or holder is None:
            continue
        inner = _get(facts, holder, layer, unknown)
        if inner is not _ABSENT:
            return inner
    owner = facts.library.defines(model.info, "base_model")
    if owner is None or owner.name != BASE_MODEL:  # the search relies on that class's `base_model` property
        raise _Undecidable  # its own idea of the base model
    prefix = facts.library.attribute(model.info, "base_model_prefix")
    base = _get(facts, model, prefix, unknown) if isinstance(prefix, str) and prefix else _ABSENT
    if isinstance(base, ModelInstance) and base != model:
        return _embeddings(facts, base, unknown, depth + 1)
    if base is _ABSENT:  # the base model is the instance itself: the search gives up
        raise Raised("NotImplementedError")
    raise _Undecidable


def _get(facts: TestClassFacts, owner: object, name: str, unknown: Unknown) -> object:
    """``getattr(owner, name)`` on an instance of a library class: the value or :data:`_ABSENT`;
    raises :class:`_Undecidable` when only the run knows."""
    if not isinstance(owner, ModelInstance):
        raise _Undecidable
    value = facts.handlers.attribute_of(facts, owner, name, unknown, missing=_ABSENT)
    if isinstance(value, Unknown):
        raise _Undecidable
    return value


class _Undecidable(Exception):  # noqa: N818 - control flow inside this module
    """A step of the search only the run can take."""
