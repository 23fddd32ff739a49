"""The reference's value of an input, in the form the port's module took it: converted, and checked.

Compare pairs each input of a port's recorded call with the reference's input holding the same value
(:mod:`model_debugging.compare.arguments`), also in another form (:mod:`model_debugging.compare.forms`):
a ``[batch, keys]`` 0/1 padding mask against a ``[batch, heads, queries, keys]`` boolean or additive
mask, a causal ``[queries, keys]`` mask against one per sequence, a position table shared by the batch
against one per sequence. To call the port's module on the reference's values, such a value is
brought to the port's shape and dtype by the conversions its form allows:

- shape: the same elements reshaped (dimensions of size 1 dropped or added), expanded (the port holds
  one copy per sequence of a value the reference shares), or narrowed to the first position along
  the dimensions the port does not have (it shares what the reference repeats); a 4-D mask becomes
  the port's padding mask as its last query row (causally, the last query sees every key it may
  see) or, for a sliding window, as the keys some query sees, and a padding mask the port's 4-D mask, with or without the causal mask;
- a table the port holds for more positions (rotary tables made for the longest sequence, sliced in
  its attention): the reference's value, then the port's own positions beyond it, when its first
  positions are the reference's;
- dtype: a mask as the port's booleans, 0/1 integers, or 0 and the blocking value of the port's own
  mask; another value cast to the port's dtype.

A conversion counts only when it reproduces the port's own recorded value (masks and integers
exactly, other values within compare's tolerance): narrowing could drop what differs, and a padding
mask made from the reference's is a reading of it, not a copy. When none does (the port was given
another value, or its trace holds no values), :class:`NotDerivable` says why: nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch

from model_debugging.compare.forms import Form, attends, is_mask, squeezed
from model_debugging.compare.numeric import PairComparer
from model_debugging.debugger.trace_format.records import TensorRecord
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor
from model_debugging.replay.arguments import cast_finite

# a tensor in the reference's form -> the same value in the port's
Conversion = Callable[[torch.Tensor], torch.Tensor]


class NotDerivable(ValueError):
    """No known conversion of the reference's value gives what the port's module was given; the message says why."""


def in_candidate_form(
    value: torch.Tensor,
    reference: TensorRecord,
    candidate: TensorRecord,
    form: Form | None,
    comparer: PairComparer,
) -> torch.Tensor:
    """``value`` (the reference's ``reference``, rebuilt for the candidate) in the shape and dtype of
    the port's ``candidate``, by the first conversion that turns the reference's recorded value into
    the port's. Floating-point values keep ``value``'s dtype (the one the candidate computes in)."""
    if candidate.file is None:
        raise NotDerivable(
            "the port's trace records it without its values, so no conversion can be checked: "
            "trace the port with use_repr=False"
        )
    recorded = read_recorded_tensor(candidate)
    source = read_recorded_tensor(reference)
    made_by = _masks if form is Form.MASK else _values
    for convert in made_by(tuple(source.shape), recorded):
        made = convert(source)
        if made.shape == recorded.shape and _reproduces(made, recorded, form is Form.MASK, comparer):
            converted = convert(value.cpu()).to(value.device)
            if value.is_floating_point() and converted.is_floating_point():
                return cast_finite(converted, value.dtype)
            return converted
    return _refused(reference, candidate, form)


def extended(
    value: torch.Tensor, reference: TensorRecord, candidate: TensorRecord, comparer: PairComparer
) -> torch.Tensor:
    """``value`` (the reference's ``reference``) followed by the port's own recorded ``candidate``
    beyond it, when the port was given a longer table whose first positions along one dimension are
    the reference's values (rotary tables made for more positions than the sequence has: the port
    slices them itself); raises ``NotDerivable`` otherwise."""
    if candidate.file is None or reference.file is None or candidate.shape is None or reference.shape is None:
        raise NotDerivable("it pairs with no input of the reference's call")
    shape = squeezed(tuple(reference.shape))
    longer = [
        dim
        for dim, size in enumerate(candidate.shape)
        if len(shape) == len(candidate.shape)
        and size > shape[dim]
        and shape[:dim] + shape[dim + 1 :] == candidate.shape[:dim] + candidate.shape[dim + 1 :]
    ]
    recorded = read_recorded_tensor(candidate)
    for dim in longer:
        source = read_recorded_tensor(reference).reshape(shape)
        if (
            source.dtype == recorded.dtype
            and comparer.compare_tensors(recorded.narrow(dim, 0, shape[dim]), source)[0]
        ):
            rest = recorded.narrow(dim, shape[dim], recorded.shape[dim] - shape[dim]).to(value.device)
            return torch.cat([value.reshape(shape), rest.to(value.dtype)], dim=dim)
    raise NotDerivable("it pairs with no input of the reference's call")


def no_mask(
    reference_inputs: tuple[TensorRecord, ...], candidate: TensorRecord, batch_unpadded: bool
) -> tuple[torch.Tensor, str]:
    """The port's mask that lets every position through, and what it stands for, where the reference's
    call passes ``attention_mask=None`` (no padding: transformers' SDPA path then masks causally by
    itself, as a port given a padding mask does) or the reference's model was given no padding at all
    (``batch_unpadded``: its ``attention_mask`` all ones, or none; a block called positionally, as
    GPT-2's, names no mask); raises ``NotDerivable`` otherwise."""
    passed = {record.sub_path: record for record in reference_inputs}.get("kwargs.attention_mask")
    if passed is not None and not passed.is_tensor and passed.text == "None":
        source = "no mask (None)"
    elif batch_unpadded:
        source = "unpadded batch (its model's attention_mask lets every token through)"
    else:
        raise NotDerivable("the reference's call passes no attention_mask=None it could stand for")
    if candidate.file is None or not is_mask(candidate):
        raise NotDerivable("it is no mask recorded with its values")
    recorded = read_recorded_tensor(candidate)
    if not bool(attends(recorded).all()):
        raise NotDerivable("the port's mask blocks positions where the reference's call passes no mask")
    return recorded, source


def _refused(reference: TensorRecord, candidate: TensorRecord, form: Form | None) -> torch.Tensor:
    shown = f"the reference's {reference.sub_path} {list(reference.shape)} {reference.dtype}"
    target = f"{list(candidate.shape)} {candidate.dtype}"
    if form is None:
        raise NotDerivable(f"{shown} has no known conversion to {target}")
    raise NotDerivable(
        f"{shown} ({form} form), converted to {target}, is not what the port's module was given "
        "in its own run: the port computes it differently"
    )


def _reproduces(made: torch.Tensor, recorded: torch.Tensor, exact: bool, comparer: PairComparer) -> bool:
    if exact or not (made.is_floating_point() or recorded.is_floating_point()):
        return made.dtype == recorded.dtype and torch.equal(made, recorded)
    return comparer.compare_tensors(made, recorded)[0]


def _masks(shape: tuple[int, ...], recorded: torch.Tensor) -> Iterator[Conversion]:
    as_port = _mask_dtype(recorded)
    wanted = tuple(recorded.shape)
    if len(shape) == 4 and len(wanted) == 2 and (shape[0], shape[3]) == wanted:
        yield lambda mask: as_port(attends(mask)[:, 0, -1, :])  # the last query sees every key it may see
        # in a sliding window it does not: a key some query sees is no padding
        yield lambda mask: as_port(attends(mask)[:, 0].any(dim=-2))
    if len(shape) == 2 and len(wanted) == 4 and (wanted[0], wanted[3]) == shape:
        queries, keys = wanted[-2:]
        causal = torch.ones(queries, keys, dtype=torch.bool).tril(keys - queries)
        yield lambda mask: as_port(attends(mask)[:, None, None, :].expand(wanted))
        yield lambda mask: as_port(attends(mask)[:, None, None, :].expand(wanted) & causal)
    for shaped in _reshaped(shape, wanted):
        yield lambda mask, shaped=shaped: as_port(shaped(attends(mask)))


def _mask_dtype(recorded: torch.Tensor) -> Conversion:
    """Booleans (True: attend) -> a mask in the dtype and blocking value of the port's ``recorded`` one."""
    if recorded.dtype == torch.bool:
        return lambda allowed: allowed
    if not recorded.is_floating_point():
        return lambda allowed: allowed.to(recorded.dtype)
    blocked = recorded[~attends(recorded)]
    blocking = blocked.min() if blocked.numel() else torch.tensor(torch.finfo(recorded.dtype).min)
    zero = torch.zeros((), dtype=recorded.dtype)
    return lambda allowed: torch.where(allowed, zero, blocking.to(recorded.dtype))


def _values(shape: tuple[int, ...], recorded: torch.Tensor) -> Iterator[Conversion]:
    exact = not recorded.is_floating_point()  # an integer value takes the port's integer dtype
    for shaped in _reshaped(shape, tuple(recorded.shape)):
        yield lambda tensor, shaped=shaped: shaped(tensor).to(recorded.dtype) if exact else shaped(tensor)


def _reshaped(have: tuple[int, ...], shape: tuple[int, ...]) -> Iterator[Conversion]:
    """Ways to bring a tensor of shape ``have`` to ``shape``: reshaped, expanded, or narrowed to the
    first position along the dimensions ``shape`` lacks or holds once."""
    if have == shape:
        yield lambda tensor: tensor
        return
    if squeezed(have) == squeezed(shape):
        yield lambda tensor: tensor.reshape(shape)
    if len(have) <= len(shape):
        padded = (1,) * (len(shape) - len(have)) + have
        if all(size in (1, wanted) for size, wanted in zip(padded, shape, strict=True)):
            yield lambda tensor: tensor.reshape(padded).expand(shape)
    if len(shape) <= len(have):
        wanted = (1,) * (len(have) - len(shape)) + shape
        if all(size in (1, held) for size, held in zip(wanted, have, strict=True)):
            index = tuple(slice(0, 1) if size == 1 else slice(None) for size in wanted)
            yield lambda tensor: tensor[index].reshape(shape)
