"""How two recorded tensors that hold the same values in different forms are compared.

Two implementations often pass the same thing in another form: cos of shape ``[8, 8]`` against
``[1, 8, 8]``, a boolean mask ``[8, 8]`` (True: attend) against an additive float mask
``[2, 1, 8, 8]`` (0 or a large negative number), a padding mask of 0/1 integers against either, a
``Conv2d`` output ``[2, 32, 4, 4]`` against a ``Linear`` output ``[2, 16, 32]``. :func:`form_of`
says whether and how two records can be compared:

- ``SAME``: the same shape (the dtypes may still differ, which is reported);
- ``SQUEEZED``: the same shape once the dimensions of size 1 are dropped;
- ``FLATTENED``: the same elements in the same order with leading dimensions merged (a router or
  an expert given the tokens as ``[batch * tokens, width]`` against ``[batch, tokens, width]``);
- ``BROADCAST``: one expands to the other's shape (compared after expanding it);
- ``MASK``: both are masks (boolean, 0/1 integers or additive floats) whose shapes broadcast to one
  another: the positions they let through are compared. So are a padding mask ``[batch, keys]``
  and a 4-D mask ``[batch, 1 or heads, queries, keys]``: the 4-D mask must be the padding mask for
  every query, alone or with the causal mask, or with a causal sliding window (which the side
  passing the padding mask applies itself); the rows of padded queries, which a model may fill in as it likes, are left out;
- ``LAYOUT`` (outputs of a pair found by the alignment only): the same elements in another
  arrangement of dimensions, found by :func:`layout_permutation`.

With summary traces only ``SAME``, ``SQUEEZED`` and ``FLATTENED`` can be compared (statistics do not change when
dimensions of size 1 are dropped, or, for ``LAYOUT``, when dimensions are rearranged); other forms
are set aside with a note.
"""

from __future__ import annotations

import enum
import itertools
import math

import torch

from model_debugging.debugger.trace_format.records import TensorRecord

# an additive mask blocks with a large negative number (finfo.min, -1e9, -10000.0 or -inf)
_BLOCKING = -1e4


class Form(str, enum.Enum):
    SAME = "same"
    SQUEEZED = "squeezed"
    FLATTENED = "flattened"
    BROADCAST = "broadcast"
    MASK = "mask"
    LAYOUT = "layout"

    def __str__(self) -> str:
        return self.value


def dtype_class(dtype: str | None) -> str:
    """ "bool", "int", "float" or "complex" for a recorded dtype such as ``torch.bfloat16``."""
    name = (dtype or "").removeprefix("torch.")
    if name == "bool":
        return "bool"
    if name.startswith("complex"):
        return "complex"
    if "float" in name:
        return "float"
    return "int"


def _statistic(record: TensorRecord, name: str) -> float | None:
    value = dict(record.statistics).get(name)
    if value is None:
        value = dict(record.stats).get(name)
    return value


def is_mask(record: TensorRecord) -> bool:
    """A boolean tensor, a tensor of 0/1 integers, or a float tensor of 0 and large negative numbers."""
    kind = dtype_class(record.dtype)
    if kind == "bool":
        return True
    low, high = _statistic(record, "min"), _statistic(record, "max")
    if dict(record.statistics).get("neginf"):  # the float64 statistics leave -inf out of min
        low = -math.inf
    if low is None or high is None:
        return False
    if kind == "int":
        return low >= 0 and high <= 1
    return kind == "float" and high == 0 and low <= _BLOCKING


def squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(size for size in shape if size != 1)


def flattened(one: tuple[int, ...], other: tuple[int, ...]) -> bool:
    """Whether two shapes of as many elements differ only in how the leading dimensions are merged
    (``[2, 10, 32]`` and ``[20, 32]``): the same last dimension, at least two dimensions on one side."""
    one, other = squeezed(tuple(one)), squeezed(tuple(other))
    return (
        one != other
        and len(one) != len(other)
        and min(len(one), len(other)) >= 2
        and one[-1] == other[-1]
        and math.prod(one) == math.prod(other)
    )


def _expands_to(small: tuple[int, ...], large: tuple[int, ...]) -> bool:
    if len(small) > len(large):
        return False
    padded = (1,) * (len(large) - len(small)) + small
    return all(size in (1, target) for size, target in zip(padded, large, strict=True))


def _broadcast(left: tuple[int, ...], right: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape both broadcast to, or None (``torch.broadcast_shapes`` imports a second of torch)."""
    size = max(len(left), len(right))
    left, right = (1,) * (size - len(left)) + tuple(left), (1,) * (size - len(right)) + tuple(right)
    if any(one != other and 1 not in (one, other) for one, other in zip(left, right, strict=True)):
        return None
    return tuple(max(one, other) for one, other in zip(left, right, strict=True))


def _broadcastable(left: tuple[int, ...], right: tuple[int, ...]) -> bool:
    return _broadcast(left, right) is not None


def form_of(reference: TensorRecord, candidate: TensorRecord) -> Form | None:
    """How ``candidate`` can be compared with ``reference``, or None when it cannot be the same value."""
    if reference.shape is None or candidate.shape is None:
        return None
    masks = is_mask(reference) and is_mask(candidate)
    same_class = dtype_class(reference.dtype) == dtype_class(candidate.dtype)
    if masks and _padding_against_full(tuple(reference.shape), tuple(candidate.shape)):
        return Form.MASK
    if masks and not (
        same_class and reference.shape == candidate.shape and dtype_class(reference.dtype) == "bool"
    ):
        same = squeezed(reference.shape) == squeezed(candidate.shape)
        return Form.MASK if same or _broadcastable(reference.shape, candidate.shape) else None
    if not same_class:
        return None
    if reference.shape == candidate.shape:
        return Form.SAME
    if squeezed(reference.shape) == squeezed(candidate.shape):
        return Form.SQUEEZED
    if flattened(reference.shape, candidate.shape):
        return Form.FLATTENED
    if _expands_to(reference.shape, candidate.shape) or _expands_to(candidate.shape, reference.shape):
        return Form.BROADCAST
    return None


def comparable_in_statistics(form: Form) -> bool:
    """Whether the statistics of two records of this form are those of the same values."""
    return form in (Form.SAME, Form.SQUEEZED, Form.FLATTENED, Form.LAYOUT)


def converted(
    form: Form, reference: torch.Tensor, candidate: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``reference`` and ``candidate`` brought to one shape (and, for masks, to "attend" booleans)."""
    if form is Form.MASK:
        reference, candidate = attends(reference), attends(candidate)
        if _padding_against_full(tuple(reference.shape), tuple(candidate.shape)):
            return _with_padding(reference, candidate)
        if squeezed(tuple(reference.shape)) == squeezed(tuple(candidate.shape)):
            return reference, candidate.reshape(reference.shape)
        shape = _broadcast(tuple(reference.shape), tuple(candidate.shape))
        return reference.expand(shape), candidate.expand(shape)
    if form is Form.SQUEEZED:
        return reference, candidate.reshape(reference.shape)
    if form is Form.FLATTENED:  # in the unflattened shape, where padded tokens can be told
        if reference.dim() >= candidate.dim():
            return reference, candidate.reshape(reference.shape)
        return reference.reshape(candidate.shape), candidate
    if form is Form.BROADCAST:
        shape = _broadcast(tuple(reference.shape), tuple(candidate.shape))
        return reference.expand(shape), candidate.expand(shape)
    if form is Form.LAYOUT:
        return _arranged(reference, tuple(candidate.shape)), candidate
    return reference, candidate


def _padding_against_full(one: tuple[int, ...], other: tuple[int, ...]) -> bool:
    """Whether ``one`` is the shape of a padding mask ``[batch, keys]`` and ``other`` that of a 4-D
    mask ``[batch, heads, queries, keys]`` of the same batch and keys, in either order."""
    if len(one) == 4 and len(other) == 2:
        one, other = other, one
    return len(one) == 2 and len(other) == 4 and (one[0], one[1]) == (other[0], other[3])


def _with_padding(reference: torch.Tensor, candidate: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The 4-D mask of one side (True: attend) and the one the other side's padding mask makes:
    causal when the 4-D mask lets no query see a later key, within the farthest distance behind a
    query it lets any real query see (a sliding window); the rows of padded queries are left out of
    both (set True)."""
    swapped = reference.dim() == 2
    full, padding = (candidate, reference) if swapped else (reference, candidate)
    queries, keys = full.shape[-2:]
    made = padding[:, None, None, :].expand(full.shape)
    # a query's row matters only when the query is no padding itself
    padded = ~padding[:, None, :, None].expand(full.shape) if queries == keys else torch.zeros_like(full)
    later = torch.ones(queries, keys, dtype=torch.bool).triu(keys - queries + 1)
    if not full[..., later].any():
        made = made & ~later & _window(full & ~padded)
    return (made | padded, full | padded) if swapped else (full | padded, made | padded)


def _window(full: torch.Tensor) -> torch.Tensor:
    """``[queries, keys]``: True where a key is no farther behind its query than the farthest one
    ``full`` lets a query see: the sliding window of a causal mask (every key when ``full`` lets
    none through)."""
    queries, keys = full.shape[-2:]
    behind = torch.arange(queries)[:, None] + (keys - queries) - torch.arange(keys)[None, :]
    seen = behind.expand(full.shape)[full]
    return behind <= (int(seen.max()) if seen.numel() else keys)


def attends(mask: torch.Tensor) -> torch.Tensor:
    if mask.dtype == torch.bool:
        return mask
    if mask.is_floating_point():
        return mask > _BLOCKING
    return mask != 0


# ---- layouts -------------------------------------------------------------------------------------


def _groupings(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every way to merge runs of neighbouring dimensions of ``shape`` (sizes of the merged dims)."""
    groupings = []
    for cuts in itertools.product((False, True), repeat=max(len(shape) - 1, 0)):
        sizes, current = [], shape[0] if shape else 1
        for size, cut in zip(shape[1:], cuts, strict=True):
            if cut:
                sizes.append(current)
                current = size
            else:
                current *= size
        groupings.append((*sizes, current))
    return groupings


def layout_permutation(
    reference: tuple[int, ...], candidate: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """``(merged reference shape, permutation)`` such that ``reference.reshape(merged).permute(p)``
    has ``candidate``'s elements in ``candidate``'s order once reshaped, when exactly one such
    arrangement exists (a ``[2, 32, 4, 4]`` Conv2d output against a ``[2, 16, 32]`` Linear output:
    merged ``[2, 32, 16]``, permutation ``(0, 2, 1)``). The leading (batch) dimension stays in place."""
    if reference == candidate or math.prod(reference) != math.prod(candidate) or len(reference) > 6:
        return None
    found = set()
    for merged_reference in _groupings(reference):
        for merged_candidate in _groupings(candidate):
            if sorted(merged_reference) != sorted(merged_candidate) or len(merged_reference) < 2:
                continue
            if len(set(merged_reference)) != len(merged_reference):
                continue  # repeated sizes: the arrangement is ambiguous
            permutation = tuple(merged_reference.index(size) for size in merged_candidate)
            if permutation[0] == 0 and permutation != tuple(range(len(permutation))):
                found.add((merged_reference, permutation))
    return found.pop() if len(found) == 1 else None


def _arranged(reference: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    merged, permutation = layout_permutation(tuple(reference.shape), shape)
    return reference.reshape(merged).permute(permutation).reshape(shape)
