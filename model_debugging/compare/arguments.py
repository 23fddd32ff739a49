"""Which recorded value of one call is compared with which of its counterpart's.

Two implementations of the same module may take their inputs in other orders, under other names,
in other forms, and pass things the other does not (``position_ids``, a cache, a bias computed once
and passed down). The inputs of two paired calls are paired, in this order:

1. **by name**: every value, when both calls have the same signature (the same argument places:
   ``args.0``, ``kwargs.mask``, ...); otherwise the keyword arguments both name;
2. **by shape**: a tensor that can be compared with exactly one tensor of the other call (same
   shape, or another form of the same value: see :mod:`.forms`), which in turn can be compared
   with it alone; a 0/1 integer tensor and an integer tensor with other values are not paired so:
   a padding mask and the position ids (or cache positions) of a call share shape and dtype, and
   one side often passes only one of them (with no padding, a transformers model passes
   ``attention_mask=None`` where a port passes its mask of ones);
3. **by value**: among tensors that several others could be (cos and sin, two masks), those that
   agree with exactly one of them; then 2. again for what is left;
4. **by order** (a guess): what is still ambiguous, in the order the calls received it. A guessed
   pair whose values differ never counts as a difference of the call: it is a note.

Positional places are never paired by their position alone across different signatures. What is
left unpaired is passed by one side only: a note, never a difference.

Outputs are paired by place when both calls return the same structure, else tensor by tensor in
order; an output tensor on one side only is a difference. Except when the calls return different
numbers of tensors, the fewer (at least two) being, in order, some of the other's with the same
shapes and dtypes (:func:`returned_part`: a port's router returning ``(weights, indices)`` where the
reference's returns ``(logits, weights, indices)``): those are paired, and what one side alone
returns is a note, compared where it is used (the inputs of the calls after it).
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from model_debugging.compare.forms import Form, dtype_class, form_of, is_mask, layout_permutation
from model_debugging.compare.fused import TensorSignature, signature
from model_debugging.debugger.trace_format.records import TensorRecord

# (reference, candidate, form) -> whether the two values agree
Agreement = Callable[[TensorRecord, TensorRecord, Form], bool]


class PairedBy(str, enum.Enum):
    NAME = "name"
    SHAPE = "shape"
    VALUE = "value"
    ORDER = "order"  # a guess

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Paired:
    """Two values compared with each other (either may be None: that side has no value there)."""

    reference: TensorRecord | None
    candidate: TensorRecord | None
    by: PairedBy = PairedBy.NAME
    form: Form | None = Form.SAME
    counted: bool = True  # False: returned by one side only beside a part of the other's (a note)


def same_places(reference: Sequence[TensorRecord], candidate: Sequence[TensorRecord]) -> bool:
    return [record.sub_path for record in reference] == [record.sub_path for record in candidate]


def pair_inputs(
    reference: Sequence[TensorRecord], candidate: Sequence[TensorRecord], agree: Agreement
) -> list[Paired]:
    """The input pairs of two calls, and (with one side None) what only one side passed."""
    if same_places(reference, candidate):
        return [_by_place(left, right) for left, right in zip(reference, candidate, strict=True)]
    pairs: list[Paired] = []
    named = {record.sub_path: record for record in candidate if record.sub_path.startswith("kwargs.")}
    left: list[TensorRecord] = []
    for record in reference:
        partner = named.pop(record.sub_path, None) if record.sub_path.startswith("kwargs.") else None
        if partner is not None and record.is_tensor == partner.is_tensor:
            pairs.append(_by_place(record, partner))
        else:
            left.append(record)
            if partner is not None:
                named[partner.sub_path] = partner
    named_pairs = {id(pair.candidate) for pair in pairs}
    right = [record for record in candidate if id(record) not in named_pairs]
    left_tensors = [record for record in left if record.is_tensor]
    right_tensors = [record for record in right if record.is_tensor]
    pairs += _pair_tensors(left_tensors, right_tensors, agree)
    paired = {id(pair.reference) for pair in pairs} | {id(pair.candidate) for pair in pairs}
    pairs += [Paired(record, None) for record in left if id(record) not in paired and _passed(record)]
    pairs += [Paired(None, record) for record in right if id(record) not in paired and _passed(record)]
    return pairs


def _passed(record: TensorRecord) -> bool:
    """A value a call was given; ``None`` (nothing given) on one side only is no news."""
    return record.is_tensor or record.text not in (None, "None")


def _by_place(reference: TensorRecord, candidate: TensorRecord) -> Paired:
    if reference.is_tensor and candidate.is_tensor:
        return Paired(reference, candidate, PairedBy.NAME, form_of(reference, candidate))
    return Paired(reference, candidate, PairedBy.NAME, None)


def _pair_tensors(
    reference: list[TensorRecord], candidate: list[TensorRecord], agree: Agreement
) -> list[Paired]:
    """Tensors of two calls with different signatures: by shape, by value, then by order."""
    forms = {
        (i, j): form
        for i, left in enumerate(reference)
        for j, right in enumerate(candidate)
        if (form := form_of(left, right)) is not None
    }
    by_order_only = {(i, j) for i, j in forms if _mask_against_indices(reference[i], candidate[j])}
    pairs: list[Paired] = []
    free = (set(range(len(reference))), set(range(len(candidate))))

    def take(i: int, j: int, by: PairedBy) -> None:
        pairs.append(Paired(reference[i], candidate[j], by, forms[i, j]))
        free[0].discard(i)
        free[1].discard(j)

    def options(side: int, index: int, guessing: bool = False) -> list[int]:
        return [
            (j if side == 0 else i)
            for (i, j) in forms
            if (i if side == 0 else j) == index
            and i in free[0]
            and j in free[1]
            and (guessing or (i, j) not in by_order_only)
        ]

    def by_shape() -> None:
        changed = True
        while changed:
            changed = False
            for i in sorted(free[0]):
                partners = options(0, i)
                if len(partners) == 1 and options(1, partners[0]) == [i]:
                    take(i, partners[0], PairedBy.SHAPE)
                    changed = True

    by_shape()
    ambiguous = [(i, j) for (i, j) in forms if i in free[0] and j in free[1] and (i, j) not in by_order_only]
    agreeing = [(i, j) for i, j in ambiguous if agree(reference[i], candidate[j], forms[i, j])]
    for i, j in agreeing:
        if sum(pair[0] == i for pair in agreeing) == 1 and sum(pair[1] == j for pair in agreeing) == 1:
            take(i, j, PairedBy.VALUE)
    by_shape()
    for i in sorted(free[0]):
        partners = sorted(options(0, i, guessing=True))
        if partners:
            take(i, partners[0], PairedBy.ORDER)
    return pairs


def _mask_against_indices(reference: TensorRecord, candidate: TensorRecord) -> bool:
    """An integer tensor of 0/1 (a padding mask) against an integer tensor with other values."""
    integers = dtype_class(reference.dtype) == dtype_class(candidate.dtype) == "int"
    return integers and is_mask(reference) != is_mask(candidate)


def pair_outputs(reference: Sequence[TensorRecord], candidate: Sequence[TensorRecord]) -> list[Paired]:
    """The output pairs of two calls: by place for the same structure, else tensors in order."""
    if same_places(reference, candidate):
        return [
            Paired(
                left,
                right,
                PairedBy.NAME,
                _output_form(left, right) if left.is_tensor and right.is_tensor else None,
            )
            for left, right in zip(reference, candidate, strict=True)
        ]
    left = [record for record in reference if record.is_tensor]
    right = [record for record in candidate if record.is_tensor]
    part = returned_part([signature(record) for record in left], [signature(record) for record in right])
    if part is not None:
        pairs = [Paired(left[i], right[j], PairedBy.SHAPE, _output_form(left[i], right[j])) for i, j in part]
        pairs += [Paired(record, None, counted=False) for i, record in enumerate(left) if i not in dict(part)]
        paired = {j for _, j in part}
        return pairs + [
            Paired(None, record, counted=False) for j, record in enumerate(right) if j not in paired
        ]
    pairs = [
        Paired(one, other, PairedBy.ORDER if len(left) > 1 else PairedBy.SHAPE, _output_form(one, other))
        for one, other in zip(left, right, strict=False)
    ]
    pairs += [Paired(record, None) for record in left[len(right) :]]
    pairs += [Paired(None, record) for record in right[len(left) :]]
    return pairs


def returned_part(
    reference: Sequence[TensorSignature], candidate: Sequence[TensorSignature]
) -> list[tuple[int, int]] | None:
    """The (reference, candidate) positions of the tensors two calls both return, when they return
    different numbers of them and the fewer (at least two: one tensor could be part of anything)
    are, in order, some of the other's with the same shapes and dtypes. None otherwise."""
    if len(reference) == len(candidate) or min(len(reference), len(candidate)) < 2:
        return None
    longer, shorter = (reference, candidate) if len(reference) > len(candidate) else (candidate, reference)
    positions, start = [], 0
    for wanted in shorter:
        found = next((i for i in range(start, len(longer)) if longer[i] == wanted), None)
        if found is None:
            return None
        positions.append(found)
        start = found + 1
    pairs = list(enumerate(positions))
    return [(i, j) for j, i in pairs] if longer is reference else pairs


def _output_form(reference: TensorRecord, candidate: TensorRecord) -> Form | None:
    """The form of two outputs: as for inputs, or the same elements in another layout."""
    form = form_of(reference, candidate)
    if form is None and layout_permutation(reference.shape, candidate.shape) is not None:
        return Form.LAYOUT
    return form


def literal(text: str | None) -> tuple[bool, object]:
    """``(True, value)`` when ``text`` (a recorded repr) is a Python literal (numbers, strings,
    bools, None, and tuples/lists/dicts of them), else ``(False, None)``: an object's repr."""
    if text is None:
        return True, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None
