"""A candidate module called the way its own model called it, on the reference's values: a derived adapter.

A port written in plain PyTorch takes its arguments its own way: nanoGPT's ``Block(x)`` where
GPT-2's block gets ``(hidden_states, past_key_values, cache_position, attention_mask, ...)``, a
Llama port's ``Block(x, cos, sin, mask)`` with a ``[batch, tokens]`` padding mask where the
reference's decoder layer gets ``(hidden_states, attention_mask=<4-D mask>, position_embeddings=(cos,
sin), ...)``. The candidate's trace records how its model called the module, and compare pairs the
values of the two recorded calls (:func:`~model_debugging.compare.arguments.pair_inputs`: by name,
shape, then value). Each tensor of the candidate's call is replaced by the reference's value it pairs
with: as it is, or reshaped when only dimensions of size 1 differ, or converted to the port's form
(:mod:`.conversions`: a mask, a table shared by the batch), the conversion checked against the port's
own recorded value. Its other arguments are its own recorded literals. A tensor that pairs with none
of the reference's, only by order (a guess), or in a form no checked conversion reproduces has no
derivable value: the call is not made, and the reason names the parameter.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import torch
from torch import nn

from model_debugging.compare.arguments import Paired, PairedBy, pair_inputs
from model_debugging.compare.forms import Form, dtype_class
from model_debugging.compare.numeric import PairComparer
from model_debugging.debugger.trace_format.records import TensorRecord, TraceNode
from model_debugging.replay.adapters import CannotCall
from model_debugging.replay.arguments import (
    RecordedCall,
    Sources,
    UnrebuildableValue,
    flatten_output,
    rebuild_call,
)
from model_debugging.replay.conversions import NotDerivable, extended, in_candidate_form, no_mask


@dataclass(frozen=True)
class OwnCall:
    """The candidate's recorded call of a module (``candidate``), paired with the reference's (``reference``)."""

    reference: TraceNode
    candidate: TraceNode
    comparer: PairComparer
    modules: Callable[[str], nn.Module]  # a module the candidate's call passed, by its trace path
    forward: Callable  # the candidate module's forward, to name its parameters
    batch_unpadded: bool  # the reference's model was given no padding (see ``padding.pads_nothing``)

    @cached_property
    def pairs(self) -> list[Paired]:
        return pair_inputs(self.reference.inputs, self.candidate.inputs, self.comparer.agree)

    @property
    def in_other_forms(self) -> bool:
        """Whether the reference's call, though the candidate's signature takes it, would hand a module
        with submodules an input in a form its own model never gives it: a tensor of the candidate's
        call pairs with one of another kind or of a shape that is not the same but for dimensions of
        size 1 (a ``[batch, keys]`` mask against a 4-D one). A leaf keeps the reference's call: it is
        judged on its outputs in the reference's form."""
        if self.reference.outputs is not None:
            return False
        return any(
            pair.reference is not None
            and pair.candidate is not None
            and pair.reference.is_tensor
            and pair.candidate.is_tensor
            and pair.form not in (Form.SAME, Form.SQUEEZED)
            and (
                pair.reference.shape != pair.candidate.shape
                or dtype_class(pair.reference.dtype) != dtype_class(pair.candidate.dtype)
            )
            for pair in self.pairs
        )

    def __call__(self, call: RecordedCall) -> tuple[RecordedCall, str]:
        """The candidate's recorded call with each tensor replaced by the value of the reference's
        rebuilt ``call`` it pairs with, and what was converted (raises ``CannotCall`` naming the
        parameter that has no derivable value)."""
        given = dict(flatten_output({"args": call.args, "kwargs": call.kwargs}))
        supplied: dict[str, torch.Tensor] = {}
        converted: list[str] = []
        for pair in self.pairs:
            if pair.candidate is None or not pair.candidate.is_tensor:
                continue
            wanted = self._parameter(pair.candidate)
            try:
                value, source = self._value(pair, given)
            except NotDerivable as error:
                try:
                    value, source = no_mask(self.reference.inputs, pair.candidate, self.batch_unpadded)
                except NotDerivable:
                    raise CannotCall(f"{wanted} has no derivable value: {error}") from None
            supplied[pair.candidate.sub_path] = value
            if source is not None:
                name = wanted.partition(" (")[0]
                converted.append(f"{name} = the reference's {source} as {list(value.shape)} {value.dtype}")
        try:
            rebuilt = rebuild_call(
                self.candidate.inputs,
                Sources(modules=self.modules, tensors=lambda record: supplied[record.sub_path]),
            )
        except UnrebuildableValue as error:
            raise CannotCall(f"its own recorded argument {error}") from None
        shown = "called as the port's own model called it (its trace), on the reference's values"
        if converted:
            shown += "; converted to its form, as its own run was given them: " + ", ".join(converted)
        return rebuilt, shown

    def _value(self, pair: Paired, given: dict[str, Any]) -> tuple[torch.Tensor, str | None]:
        """The reference's value for the candidate's tensor of ``pair``, and, when converted to the
        candidate's form, which value it was (raises ``NotDerivable``)."""
        if pair.reference is None:
            return self._extended(pair.candidate, given)
        shown = f"{_keyword(pair.reference.sub_path)} {list(pair.reference.shape)} {pair.reference.dtype}"
        if pair.by is PairedBy.ORDER:
            raise NotDerivable(
                f"compare pairs it with the reference's {shown} only by order, their values differ "
                "(the port computes it another way)"
            )
        value = given.get(pair.reference.sub_path)
        if not isinstance(value, torch.Tensor):
            raise NotDerivable(f"the reference's {pair.reference.sub_path} is no tensor")
        if _same_values(pair.form, pair.reference, pair.candidate):
            return value.reshape(pair.candidate.shape), None
        return in_candidate_form(value, pair.reference, pair.candidate, pair.form, self.comparer), shown

    def _extended(self, candidate: TensorRecord, given: dict[str, Any]) -> tuple[torch.Tensor, str]:
        """A tensor only the port's call has, made from one only the reference's has whose values are
        its first positions (see ``conversions.extended``; raises ``NotDerivable``)."""
        for pair in self.pairs:
            value = None if pair.reference is None else given.get(pair.reference.sub_path)
            if pair.candidate is None and isinstance(value, torch.Tensor):
                try:
                    made = extended(value, pair.reference, candidate, self.comparer)
                except NotDerivable:
                    continue
                shown = (
                    f"{_keyword(pair.reference.sub_path)} {list(pair.reference.shape)} {pair.reference.dtype}"
                )
                return made, f"{shown}, then its own positions beyond it"
        raise NotDerivable("it pairs with no input of the reference's call")

    def _parameter(self, record: TensorRecord) -> str:
        """``mask (args.3 [2, 10] torch.int64)``: the candidate's parameter a recorded value was given to."""
        shown = f"{record.sub_path} {list(record.shape)} {record.dtype}"
        place, _, rest = record.sub_path.partition(".")
        head = rest.partition(".")[0]
        if place == "kwargs":
            return f"{head} ({shown})"
        try:
            parameters = [
                parameter.name
                for parameter in inspect.signature(self.forward).parameters.values()
                if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):  # a builtin without a signature
            parameters = []
        index = int(head) if head.isdigit() else len(parameters)
        return (
            f"{parameters[index]} ({shown})"
            if index < len(parameters)
            else f"its own recorded call's {shown}"
        )


def _keyword(sub_path: str) -> str:
    """``attention_mask`` for ``kwargs.attention_mask``, ``args.1`` as it is."""
    return sub_path.removeprefix("kwargs.")


def _same_values(form: Form | None, reference: TensorRecord, candidate: TensorRecord) -> bool:
    """Whether the reference's value can be passed as the candidate's: the same elements, at most
    with dimensions of size 1 dropped or added (a mask in another dtype is another form)."""
    if form is Form.SQUEEZED:
        return True
    return (reference.shape, reference.dtype) == (candidate.shape, candidate.dtype)
