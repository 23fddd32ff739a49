"""Rebuilding a recorded call's ``args`` and ``kwargs`` from a trace, and flattening what a call returns.

A recorded value comes back when it is a tensor stored in its own file (``use_repr=False``) or the
repr of a plain literal: ``None``, a bool, an int, a float (``nan`` and ``inf`` included) or a
string. Lists and tuples are recorded as JSON lists and rebuilt as tuples; dicts keep their keys. A
group whose keys are exactly ``0 .. n-1`` is taken as a tuple (the trace writes tuples, lists and
dicts with such keys alike). A module of the traced model passed to a recorded function is recorded
as a module reference and comes back as the candidate's matching module; a cache object comes back
when :mod:`.caches` can rebuild an equivalent one. Floating-point tensors are cast to the
candidate's dtype (a float32 reference replayed on a bfloat16 port gets what the port computes in).
Anything else (an object's repr, a tensor recorded only as its repr) cannot be rebuilt:
:class:`UnrebuildableValue` names it and says why, nothing is guessed.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from model_debugging.debugger.function_records import module_reference_path
from model_debugging.debugger.trace_format.records import TensorRecord
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor

_FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_LITERAL_TYPES = (type(None), bool, int, float, str)
# a module path of the reference -> the candidate's module (raises LookupError when none matches)
ModuleResolver = Callable[[str], nn.Module]
# a recorded repr that is no plain literal -> an equivalent object, None when it knows no such
# object (raises UnrebuildableValue when it knows the kind but cannot rebuild this one)
ObjectResolver = Callable[[TensorRecord], Any]


class UnrebuildableValue(ValueError):
    """A recorded input cannot be turned back into a Python value; ``sub_path`` says which one."""

    def __init__(self, sub_path: str, reason: str):
        self.sub_path = sub_path
        self.reason = reason
        super().__init__(f"{sub_path}: {reason}")


@dataclass(frozen=True)
class Placement:
    """Where rebuilt tensors go: the candidate's device, and the dtype floating-point tensors are cast to."""

    device: torch.device | None = None
    dtype: torch.dtype | None = None

    def put(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.dtype is not None and tensor.is_floating_point() and tensor.dtype != self.dtype:
            tensor = cast_finite(tensor, self.dtype)
        return tensor if self.device is None else tensor.to(self.device)


def cast_finite(tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``tensor`` in ``dtype``, finite values kept finite (float32's ``finfo.min`` mask becomes bfloat16's, not ``-inf``)."""
    if not dtype.is_floating_point:
        return tensor.to(dtype)
    limits = torch.finfo(dtype)
    finite = tensor.isfinite()
    return torch.where(finite, tensor.clamp(limits.min, limits.max), tensor).to(dtype)


@dataclass(frozen=True)
class RecordedCall:
    """The positional and keyword arguments of one recorded call, ready to pass to the candidate."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def literal_value(record: TensorRecord) -> Any:
    """The Python value of a non-tensor record, when its repr is one of the plain literals."""
    text = record.text
    if text is None:
        return None
    if text in _FLOAT_WORDS:
        return _FLOAT_WORDS[text]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = _Unparsed
    if value is _Unparsed or not isinstance(value, _LITERAL_TYPES):
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise UnrebuildableValue(
            record.sub_path, f"recorded as the repr {shown!r}, which is not a plain literal"
        )
    return value


class _Unparsed:
    """Marks a repr that ``ast.literal_eval`` refused."""


class _Branch(dict):
    """An inner node of the path tree (a plain dict could be a recorded value)."""


@dataclass(frozen=True)
class Sources:
    """Where the values of a rebuilt call come from, besides literals.

    ``modules`` turns a recorded module reference (a function's argument that was a module of the
    traced model) into the candidate's module; ``objects`` rebuilds other reprs it knows (caches);
    ``tensors`` supplies each tensor instead of reading its file (placed anyway).
    """

    placement: Placement = Placement()
    modules: ModuleResolver | None = None
    objects: ObjectResolver | None = None
    tensors: Callable[[TensorRecord], torch.Tensor] | None = None


def _leaf_value(record: TensorRecord, sources: Sources) -> Any:
    if not record.is_tensor:
        path = module_reference_path(record.text)
        if path is None:
            try:
                return literal_value(record)
            except UnrebuildableValue:
                rebuilt = sources.objects(record) if sources.objects is not None else None
                if rebuilt is None:
                    raise
                return rebuilt
        if sources.modules is None:
            raise UnrebuildableValue(
                record.sub_path, f"refers to the module {path}, which is not available here"
            )
        try:
            return sources.modules(path)
        except LookupError as error:
            raise UnrebuildableValue(record.sub_path, f"refers to the module {path}: {error}") from None
    if sources.tensors is not None:
        return sources.placement.put(sources.tensors(record))
    if record.file is None:
        raise UnrebuildableValue(
            record.sub_path, "a tensor recorded only as its repr: trace the reference with use_repr=False"
        )
    return sources.placement.put(read_recorded_tensor(record))


def _path_tree(records: tuple[TensorRecord, ...], sources: Sources) -> _Branch:
    tree = _Branch()
    for record in records:
        parts = record.sub_path.split(".")
        branch = tree
        for part in parts[:-1]:
            branch = branch.setdefault(part, _Branch())
            if not isinstance(branch, _Branch):
                raise UnrebuildableValue(record.sub_path, "recorded both as a value and as a container")
        branch[parts[-1]] = _leaf_value(record, sources)
    return tree


def _assemble(tree: _Branch) -> tuple | dict:
    """Nested branches -> tuples (keys exactly 0..n-1) and dicts."""
    values = {key: _assemble(item) if isinstance(item, _Branch) else item for key, item in tree.items()}
    if list(values) == [str(index) for index in range(len(values))]:
        return tuple(values.values())
    return values


def rebuild_call(inputs: tuple[TensorRecord, ...], sources: Sources = Sources()) -> RecordedCall:
    """The arguments of a recorded call; raises :class:`UnrebuildableValue` for the first one that cannot be rebuilt."""
    for record in inputs:
        if record.sub_path.split(".")[0] not in {"args", "kwargs"} or "." not in record.sub_path:
            raise UnrebuildableValue(record.sub_path or "inputs", "not under 'args' or 'kwargs'")
    tree = _path_tree(inputs, sources)
    args = _assemble(tree.get("args", _Branch()))
    if isinstance(args, dict):
        missing = next(str(index) for index in range(len(args) + 1) if str(index) not in args)
        raise UnrebuildableValue(
            f"args.{missing}", "not in the trace (an empty list, tuple or dict leaves no record)"
        )
    kwargs = tree.get("kwargs", _Branch())
    kwargs = {key: _assemble(item) if isinstance(item, _Branch) else item for key, item in kwargs.items()}
    return RecordedCall(args=args, kwargs=kwargs)


def rebuild_outputs(outputs: tuple[TensorRecord, ...], placement: Placement = Placement()) -> Any:
    """A recorded call's outputs as a value: a tensor, a tuple or a dict (a ``ModelOutput`` comes back as a dict)."""
    if len(outputs) == 1 and outputs[0].sub_path == "":
        return _leaf_value(outputs[0], Sources(placement))
    return _assemble(_path_tree(outputs, Sources(placement)))


def flatten_output(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(sub path, leaf) pairs of what a call returned, named like the trace names recorded outputs."""
    if isinstance(value, torch.Tensor):
        yield prefix, value
    elif isinstance(value, dict):  # ModelOutput included: it is a dict of its non-None fields
        for key, item in value.items():
            yield from flatten_output(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from flatten_output(item, f"{prefix}.{index}" if prefix else str(index))
    else:
        yield prefix, value
