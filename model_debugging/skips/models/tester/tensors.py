"""The tensors a model tester builds for its inputs: their shape and whether they hold a zero.

The padding-free generation tests skip on ``inputs_dict["input_ids"].ndim != 2`` and on ``0 not in
inputs_dict["attention_mask"]``. Both are decided by how the tester makes those tensors, read from
its source: ``ids_tensor([batch, seq], vocab)`` has rank 2; ``torch.ones(...)`` holds no zero;
``torch.tril(torch.ones(...))`` over at least two columns holds one. Random values decide a zero
only when it is certain beyond doubt: a 0/1 random tensor (``random_attention_mask``, or
``ids_tensor`` with a vocabulary of 2) with at least :data:`CERTAIN_DRAWS` random entries has a zero
but with probability 2**-32. An item set to a literal (``mask[-1, 0] = 0``) gives a zero when its
integer indices surely name an element; a non-zero written into a tensor without zeros keeps it
so. Anything else keeps the fact unknown.
"""

from __future__ import annotations

import math

from model_debugging.skips.interp.values import Tensor, Unknown

CERTAIN_DRAWS = 32  # random 0/1 entries above which a tensor without a zero has probability <= 2**-32
FACTORIES = frozenset({"ids_tensor", "floats_tensor", "random_attention_mask"})
TORCH_FUNCTIONS = frozenset({"ones", "zeros", "ones_like", "zeros_like", "tril", "triu"})
# Methods that return the same values (``bool()`` keeps the zeros: ``0 in t`` also matches False).
_SAME_VALUES = frozenset({"to", "contiguous", "clone", "long", "int", "float", "bool", "cpu", "detach"})
_COMPARISONS = frozenset({"ne", "eq", "gt", "lt", "ge", "le"})


def dims_of(shape: object) -> tuple[int | None, ...] | None:
    """The sizes of a shape written as a list / tuple (or a known tensor's ``.shape``)."""
    if not isinstance(shape, (list, tuple)):
        return None
    return tuple(size if isinstance(size, int) and not isinstance(size, bool) else None for size in shape)


def factory(name: str, arguments: list[object], keywords: dict[str, object]) -> Tensor:
    """``ids_tensor(shape, vocab_size)``, ``floats_tensor(shape)``, ``random_attention_mask(shape)``."""
    dims = dims_of(arguments[0] if arguments else keywords.get("shape"))
    has_zero = None
    if name == "random_attention_mask" and dims is not None and len(dims) >= 2:  # 0/1, first column 1
        fixed = dims[0] * math.prod(dims[2:]) if None not in dims else None
        has_zero = _certain_zero(dims, fixed)
    elif name == "ids_tensor":
        vocab = arguments[1] if len(arguments) > 1 else keywords.get("vocab_size")
        has_zero = _certain_zero(dims, 0) if vocab == 2 else None
    return Tensor(name, dims=dims, has_zero=has_zero)


def _certain_zero(dims: tuple[int | None, ...] | None, fixed: int | None) -> bool | None:
    """A 0/1 random tensor of ``dims`` with ``fixed`` entries set to 1 holds a zero (when certain)."""
    if dims is None or None in dims or fixed is None:
        return None
    return True if math.prod(dims) - fixed >= CERTAIN_DRAWS else None


def item_set(tensor: Tensor, index: object, value: object) -> Tensor:
    """``tensor[index] = value`` (``index`` the literal indices, None when not literal): the same
    shape; a zero written at integer indices inside the known shape is there, a non-zero written
    into a tensor without zeros leaves none; otherwise the zeros are unknown."""
    if not isinstance(value, (bool, int, float)):
        return Tensor(tensor.source, dims=tensor.dims)
    if value != 0:
        return Tensor(tensor.source, dims=tensor.dims, has_zero=False if tensor.has_zero is False else None)
    indices = index if isinstance(index, tuple) else (index,)
    dims = tensor.dims
    inside = (
        dims is not None
        and len(indices) <= len(dims)
        and all(
            type(item) is int and size is not None and -size <= item < size
            for item, size in zip(indices, dims, strict=False)
        )
        and None not in dims
        and math.prod(dims) > 0
    )
    return Tensor(tensor.source, dims=dims, has_zero=True if inside else None)


def torch_function(name: str, arguments: list[object]) -> Tensor:
    """``torch.ones(...)`` and the other constructors and masks of :data:`TORCH_FUNCTIONS`."""
    first = arguments[0] if arguments else None
    if name in ("ones_like", "zeros_like", "tril", "triu"):
        dims = first.dims if isinstance(first, Tensor) else None
    elif len(arguments) == 1 and isinstance(first, (list, tuple)):
        dims = dims_of(first)
    else:
        dims = dims_of(arguments)
    if name in ("ones", "ones_like"):
        return Tensor(f"torch.{name}", dims=dims, has_zero=False)
    if name in ("zeros", "zeros_like"):
        empty = dims is None or None in dims or math.prod(dims) == 0
        return Tensor(f"torch.{name}", dims=dims, has_zero=None if empty else True)
    return Tensor(f"torch.{name}", dims=dims, has_zero=_triangle_zero(name, first, dims))


def _triangle_zero(name: str, source: object, dims: tuple[int | None, ...] | None) -> bool | None:
    """``torch.tril`` zeroes what is above the diagonal (there when there are two columns),
    ``torch.triu`` what is below it (two rows); zeros already there stay."""
    if not isinstance(source, Tensor) or dims is None or len(dims) < 2 or None in dims:
        return None
    if source.has_zero:
        return True
    rows, columns = dims[-2], dims[-1]
    cleared = columns >= 2 if name == "tril" else rows >= 2
    if math.prod(dims) > 0 and cleared:
        return True
    return False if source.has_zero is False else None


def tensor_method(tensor: Tensor, name: str, arguments: list[object]) -> object:
    """``tensor.<name>(*arguments)`` for the methods whose shape or zeros are known; else unknown."""
    if name in _SAME_VALUES:
        return tensor
    if name in _COMPARISONS:
        return Tensor(f"{tensor.source}.{name}", dims=tensor.dims)
    if (
        name == "unsqueeze"
        and len(arguments) == 1
        and isinstance(arguments[0], int)
        and tensor.dims is not None
    ):
        position = arguments[0] if arguments[0] >= 0 else len(tensor.dims) + 1 + arguments[0]
        if 0 <= position <= len(tensor.dims):
            dims = (*tensor.dims[:position], 1, *tensor.dims[position:])
            return Tensor(f"{tensor.source}.unsqueeze", dims=dims, has_zero=tensor.has_zero)
    if name in ("view", "reshape") and arguments:
        shape = arguments[0] if len(arguments) == 1 and isinstance(arguments[0], (list, tuple)) else arguments
        return Tensor(f"{tensor.source}.{name}", dims=dims_of(shape), has_zero=tensor.has_zero)
    return Unknown(f"{tensor.source}.{name}(...)")


def arithmetic(left: object, right: object) -> Tensor | None:
    """``tensor + 1`` / ``tensor != pad`` and the like: the same shape, values unknown."""
    tensors = [side for side in (left, right) if isinstance(side, Tensor)]
    others = [side for side in (left, right) if not isinstance(side, Tensor)]
    if len(tensors) != 1 or not all(isinstance(side, (int, float)) for side in others):
        return None
    return Tensor(tensors[0].source, dims=tensors[0].dims)
