"""Which of a call's input tensors the call changed in place.

At a call's entry, the version counter of each tensor among its inputs is noted (torch bumps it on
every in-place operation, also through a view); at its exit, the inputs whose counter moved were
changed in place by the call or by the calls inside it. The paths are those the trace gives the
inputs' values (``args.0``, ``kwargs.position_embeddings.1``). Not checked: tensors held inside other
objects (a transformers ``Cache``: the trace records those as a repr), inference-mode tensors (they
have no version counter) and changes made through ``tensor.data`` (which do not bump it).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import torch

from model_debugging.debugger.tensors import MAX_VALUE_DEPTH, json_keys


class InputVersions:
    """The version counters of the input tensors of one call, as they were at its entry."""

    __slots__ = ("_noted",)

    def __init__(self, inputs: dict[str, Any]):
        self._noted: list[tuple[str, torch.Tensor, int]] = []
        self._note(inputs, "", 0, ())

    @classmethod
    def of_tensor(cls, path: str, tensor: torch.Tensor) -> InputVersions:
        """The versions of inputs holding one tensor at ``path`` (``args.0``): most calls' inputs."""
        versions = cls.__new__(cls)
        versions._noted = [] if tensor.is_inference() else [(path, tensor, tensor._version)]
        return versions

    def _note(self, container: Any, path: str, depth: int, inside: tuple[int, ...]) -> None:
        """Note the tensors in ``container`` (a list, tuple or dict at ``path``), in the trace's order.

        A call per container, not per value (this runs at every module call of the forward); the
        paths of values that are neither tensors nor containers are never made. ``inside``: the ids
        of the containers it is in (cycles).
        """
        if depth >= MAX_VALUE_DEPTH or id(container) in inside:
            return  # recorded as a placeholder: no tensor the trace would name
        inside = (*inside, id(container))
        if isinstance(container, dict):
            items = list(container.items())
            names = json_keys(list(map(itemgetter(0), items)))
            values = list(map(itemgetter(1), items))
        else:
            values, names = container, None
        prefix = f"{path}." if path else ""
        for index, value in enumerate(values):
            if isinstance(value, torch.Tensor):
                if not value.is_inference():
                    name = str(index) if names is None else names[index]
                    self._noted.append((prefix + name, value, value._version))
            elif isinstance(value, (list, tuple, dict)):
                name = str(index) if names is None else names[index]
                self._note(value, prefix + name, depth + 1, inside)

    def modified(self) -> list[str]:
        """The paths of the noted tensors changed in place since, in the order the trace lists them."""
        return [path for path, tensor, version in self._noted if tensor._version != version]
