"""`OutputRecorder`: which submodules produce an output field, and which item of their output it is."""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

__all__ = [
    "RECORDER_STATE_FIELDS",
    "OutputRecorder",
    "as_our_recorder",
    "default_index",
    "is_foreign_recorder",
    "recorders_from_declaration",
]


@dataclass(eq=True)
class OutputRecorder:
    """Where one output field (e.g. ``"attentions"``) is read from during a forward pass.

    A submodule is recorded when it is an instance of ``target_class``, or when ``class_name`` is its
    class's name or the last components of its dotted path (``"self_attn"`` matches
    ``layers.0.self_attn``); and, if ``layer_name`` is given, when its dotted path inside the model
    contains ``layer_name`` as whole components (``"crossattention"`` matches
    ``layers.0.crossattention`` but not ``layers.0.crossattention_norm``; ``"layers.3.attn"`` matches
    only that layer).

    Assignable like transformers' recorder (``recorder.target_class = NewAttention``, as patching code
    does); every assignment is validated, and the next capture uses the new value.

    Args:
        target_class (`type[nn.Module]`, *optional*):
            The module class whose outputs are recorded (subclasses match too).
        index (`int`, *optional*):
            Which item of a tuple/list output to record. ``None`` means the field's default: 0 for
            fields ending in ``hidden_states``, 1 otherwise (attention modules return
            ``(output, weights)``). A module returning a single tensor is recorded whole.
        layer_name (`str`, *optional*):
            Restricts recording to modules at a matching path, e.g. to tell cross-attention from
            self-attention when both use the same class.
        class_name (`str`, *optional*):
            A class name, or the trailing components of a module path, for classes that cannot be
            imported where the model is declared.
        capture_initial_hidden_state (`bool`, *optional*, defaults to `True`):
            For ``hidden_states``: whether the input of the first recorded module comes first.
        num_hidden_layers_key (`str`, *optional*, defaults to `"num_hidden_layers"`):
            Accepted for transformers compatibility. Negative ``output_hidden_states`` indices are
            resolved against the hidden states actually recorded, so no config value is needed.

    Example:
        ```python
        _can_record_outputs = {
            "hidden_states": DecoderLayer,
            "attentions": OutputRecorder(Attention, layer_name="self_attn"),
            "cross_attentions": OutputRecorder(Attention, layer_name="crossattention", index=1),
        }
        ```
    """

    target_class: type[nn.Module] | None = None
    index: int | None = None
    layer_name: str | None = None
    class_name: str | None = None
    capture_initial_hidden_state: bool = True
    num_hidden_layers_key: str = "num_hidden_layers"

    def __post_init__(self) -> None:
        self._check()
        object.__setattr__(self, "_checked", True)

    def __setattr__(self, name: str, value) -> None:
        if "_checked" not in self.__dict__:  # still in __init__; __post_init__ checks all fields at once
            object.__setattr__(self, name, value)
            return
        previous = getattr(self, name)
        object.__setattr__(self, name, value)
        try:
            self._check()
        except (TypeError, ValueError):
            object.__setattr__(self, name, previous)
            raise

    def _check(self) -> None:
        if self.target_class is None and self.class_name is None:
            raise ValueError("OutputRecorder needs a target_class or a class_name, got neither")
        if self.target_class is not None and not (
            isinstance(self.target_class, type) and issubclass(self.target_class, nn.Module)
        ):
            raise TypeError(
                f"OutputRecorder target_class must be a subclass of nn.Module, got {self.target_class!r}"
            )
        if self.index is not None and (isinstance(self.index, bool) or not isinstance(self.index, int)):
            raise TypeError(f"OutputRecorder index must be an int or None, got {self.index!r}")
        if self.class_name is not None and not (
            isinstance(self.class_name, str) and self.class_name.strip(".")
        ):
            raise ValueError(
                f"OutputRecorder class_name must name a class or a module path, got {self.class_name!r}"
            )
        if self.layer_name is not None and not self.layer_name.strip("."):
            raise ValueError(f"OutputRecorder layer_name must name a module path, got {self.layer_name!r}")

    def resolved_index(self, field: str) -> int:
        """The item index recorded for ``field``, applying the field's default when ``index`` is None."""
        return default_index(field) if self.index is None else self.index

    def matches(self, module: nn.Module, path: str) -> bool:
        """Whether ``module``, found at dotted ``path`` inside the declaring model, is recorded."""
        class_matches = (self.target_class is not None and isinstance(module, self.target_class)) or (
            self.class_name is not None
            and (type(module).__name__ == self.class_name or _ends_with_components(path, self.class_name))
        )
        if not class_matches:
            return False
        if self.layer_name is None:
            return True
        return f".{self.layer_name.strip('.')}." in f".{path}."


def _ends_with_components(path: str, suffix: str) -> bool:
    return f".{path}".endswith(f".{suffix.strip('.')}")


_RECORDER_FIELDS = ("target_class", "index", "layer_name", "class_name")
# every field that changes what a recorder records
RECORDER_STATE_FIELDS = (*_RECORDER_FIELDS, "capture_initial_hidden_state")


def is_foreign_recorder(item) -> bool:
    """Whether ``item`` is another library's recorder of the same shape (transformers' `OutputRecorder`)."""
    return not isinstance(item, (type, str, OutputRecorder)) and all(
        hasattr(item, name) for name in _RECORDER_FIELDS
    )


def as_our_recorder(item) -> OutputRecorder:
    """The same recorder as ours; its index is kept exactly (transformers' default is 0, not per field)."""
    return OutputRecorder(
        *(getattr(item, name) for name in _RECORDER_FIELDS),
        capture_initial_hidden_state=getattr(item, "capture_initial_hidden_state", True),
    )


def default_index(field: str) -> int:
    """Hidden-state fields record a module's first output; every other field its second."""
    return 0 if field.endswith("hidden_states") else 1


def recorders_from_declaration(
    can_record_outputs: dict | None, owner: str = "model"
) -> list[tuple[str, OutputRecorder]]:
    """Normalise a ``_can_record_outputs`` mapping into ``(field, OutputRecorder)`` pairs.

    Values may be a module class, a class name, an `OutputRecorder` (ours or transformers'), or a list of those.
    """
    pairs = []
    for field, declared in (can_record_outputs or {}).items():
        for item in declared if isinstance(declared, (list, tuple)) else [declared]:
            if isinstance(item, OutputRecorder):
                pairs.append((field, item))
            elif is_foreign_recorder(item):
                pairs.append((field, as_our_recorder(item)))
            elif isinstance(item, str):
                pairs.append((field, OutputRecorder(class_name=item)))
            elif isinstance(item, type) and issubclass(item, nn.Module):
                pairs.append((field, OutputRecorder(item)))
            else:
                raise TypeError(
                    f"{owner}._can_record_outputs[{field!r}] must be an nn.Module subclass, a class name or an "
                    f"OutputRecorder (or a list of them), got {item!r}"
                )
    return pairs
