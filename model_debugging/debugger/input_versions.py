"""Which of a call's input tensors the call changed in place.

At a call's entry, the version counter of each tensor among its inputs is noted (torch bumps it on
every in-place operation, also through a view); at its exit, the inputs whose counter moved were
changed in place by the call or by the calls inside it. The paths are those the trace gives the
inputs' values (``args.0``, ``kwargs.position_embeddings.1``). Not checked: tensors held inside other
objects (a transformers ``Cache``: the trace records those as a repr), inference-mode tensors (they
have no version counter) and changes made through ``tensor.data`` (which do not bump it).
"""

from __future__ import annotations

from typing import Any

import torch

from model_debugging.debugger.tensors import MAX_VALUE_DEPTH, json_keys


class InputVersions:
    """The version counters of the input tensors of one call, as they were at its entry."""

    __slots__ = ("_noted",)

    def __init__(self, inputs: dict[str, Any]):
        self._noted: list[tuple[str, torch.Tensor, int]] = []
        self._note(inputs, "", 0, set())

    def modified(self) -> list[str]:
        """The paths of the noted tensors changed in place since, in the order the trace lists them."""
        return [path for path, tensor, version in self._noted if tensor._version != version]

    def _note(self, value: Any, path: str, depth: int, open_containers: set[int]) -> None:
        if isinstance(value, torch.Tensor):
            if not value.is_inference():
                self._noted.append((path, value, value._version))
            return
        if (
            not isinstance(value, (list, tuple, dict))
            or depth >= MAX_VALUE_DEPTH
            or id(value) in open_containers
        ):
            return  # recorded as a placeholder: no tensor the trace would name
        open_containers.add(id(value))
        if isinstance(value, dict):
            items = list(value.items())
            keys = json_keys([key for key, _ in items])
            named = zip(keys, (item for _, item in items), strict=True)
        else:
            named = ((str(index), item) for index, item in enumerate(value))
        for name, item in named:
            self._note(item, f"{path}.{name}" if path else name, depth + 1, open_containers)
        open_containers.discard(id(value))
