"""A small `ModelOutput`-like dataclass base: attribute access, key access and `to_tuple()`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import torch

__all__ = ["BaseModelOutput", "BaseModelOutputWithPast", "ModelOutput"]


@dataclass
class ModelOutput:
    """Base for model output dataclasses; subclass it with ``@dataclass`` and optional fields.

    Fields left as ``None`` are absent: they are not keys, ``out["name"]`` raises `KeyError`, and
    ``to_tuple()`` (the ``return_dict=False`` form) skips them, so ``out[0]`` is the first field set.

    Example:
        ```python
        @dataclass
        class MyOutput(ModelOutput):
            last_hidden_state: torch.Tensor | None = None
            hidden_states: tuple[torch.Tensor, ...] | None = None

        out = MyOutput(last_hidden_state=h)
        out.last_hidden_state is out["last_hidden_state"] is out[0]
        ```
    """

    def keys(self) -> list[str]:
        return [field.name for field in fields(self) if getattr(self, field.name) is not None]

    def values(self) -> list[Any]:
        return [getattr(self, name) for name in self.keys()]

    def items(self) -> list[tuple[str, Any]]:
        return [(name, getattr(self, name)) for name in self.keys()]

    def to_tuple(self) -> tuple:
        return tuple(self.values())

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self else default

    def __getitem__(self, key: str | int | slice) -> Any:
        if isinstance(key, str):
            if key not in self:
                raise KeyError(f"{type(self).__name__} has no field {key!r} set; set fields: {self.keys()}")
            return getattr(self, key)
        return self.to_tuple()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        names = [field.name for field in fields(self)]
        if key not in names:
            raise KeyError(f"{type(self).__name__} has no field {key!r}; its fields are {names}")
        setattr(self, key, value)

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())


@dataclass
class BaseModelOutput(ModelOutput):
    """Output of an encoder or decoder stack without cache."""

    last_hidden_state: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class BaseModelOutputWithPast(ModelOutput):
    """Output of a decoder stack that may return its key/value cache."""

    last_hidden_state: torch.Tensor | None = None
    past_key_values: Any = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None
