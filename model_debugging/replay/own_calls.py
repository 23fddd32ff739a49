"""A candidate module called the way its own model called it, on the reference's values.

A port written in plain PyTorch takes its arguments its own way: nanoGPT's ``Block(x)`` where
GPT-2's block gets ``(hidden_states, past_key_values, cache_position, attention_mask, ...)``, a
BERT port's ``forward(input_ids, segment_ids, input_mask)`` where the reference got keywords. The
candidate's trace records how its model called the module. Compare pairs the values of the two
recorded calls (:func:`~model_debugging.compare.arguments.pair_inputs`: by name, shape, then value);
each tensor of the candidate's call is replaced by the reference's value it pairs with, and its
other arguments are its own recorded literals. A tensor that pairs with none of the reference's,
only by order (a guess), or in another form (a boolean mask against an additive one) cannot be
supplied: the call is not made, and the reason names the argument.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from model_debugging.compare.arguments import PairedBy, pair_inputs
from model_debugging.compare.forms import Form
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


def own_call(
    reference: TraceNode,
    candidate: TraceNode,
    call: RecordedCall,
    comparer: PairComparer,
    modules: Callable[[str], nn.Module],
) -> RecordedCall:
    """``candidate``'s recorded call with each tensor replaced by the value of the reference's
    rebuilt ``call`` it pairs with (raises ``CannotCall`` naming the argument that has none)."""
    given = dict(flatten_output({"args": call.args, "kwargs": call.kwargs}))
    supplied: dict[str, torch.Tensor] = {}
    for pair in pair_inputs(reference.inputs, candidate.inputs, comparer.agree):
        if pair.candidate is None or not pair.candidate.is_tensor:
            continue
        wanted = f"its own recorded call's {pair.candidate.sub_path} {list(pair.candidate.shape)}"
        if pair.reference is None or pair.by is PairedBy.ORDER:
            raise CannotCall(f"{wanted} pairs with no input of the reference's call")
        value = given.get(pair.reference.sub_path)
        if not isinstance(value, torch.Tensor) or not _same_values(pair.form, pair.reference, pair.candidate):
            raise CannotCall(
                f"{wanted} is the reference's {pair.reference.sub_path} {list(pair.reference.shape)} "
                f"{pair.reference.dtype} in another form ({pair.form or 'another shape'})"
            )
        supplied[pair.candidate.sub_path] = value.reshape(pair.candidate.shape)
    try:
        return rebuild_call(
            candidate.inputs, Sources(modules=modules, tensors=lambda record: supplied[record.sub_path])
        )
    except UnrebuildableValue as error:
        raise CannotCall(f"its own recorded argument {error}") from None


def _same_values(form: Form | None, reference: TensorRecord, candidate: TensorRecord) -> bool:
    """Whether the reference's value can be passed as the candidate's: the same elements, at most
    with dimensions of size 1 dropped or added (a mask in another dtype is another form)."""
    if form is Form.SQUEEZED:
        return True
    return (reference.shape, reference.dtype) == (candidate.shape, candidate.dtype)
