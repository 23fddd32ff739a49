"""Tokens the model's inputs pad, where two correct implementations may hold different values.

With left padding, a causal model's padded tokens attend to no key at all, and each implementation
fills that row in its own way (a softmax over blocked scores, zeros, transformers' "unmask
unattended" rows). The values at those tokens then differ between a reference and a correct port,
and no real token reads them: every attention blocks padded keys. So a tensor whose differences all
lie at padded tokens is set aside with a note (:func:`only_at_padded_tokens`); a difference at a
real token always counts. The padded tokens are those the model's own ``attention_mask`` input (a
``[batch, tokens]`` tensor of 0/1 or booleans) marks 0, read from the reference's outermost call.
"""

from __future__ import annotations

import re

import torch

from model_debugging.debugger.trace_format.records import TensorRecord, Trace
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor

AT_PADDED_TOKENS = "differs only at tokens the model's attention_mask pads: not counted"
_ROW_START = re.compile(r"\[\s*(True|False|-?\d+)\b")  # the first element of a printed row


def padded_tokens(trace: Trace) -> torch.Tensor | None:
    """``[batch, tokens]``, True at the tokens the outermost call's ``attention_mask`` keyword pads;
    None when it has none, pads nothing, or the trace holds no tensor files (summary traces)."""
    record = _attention_mask(trace)
    if trace.mode != "tensors" or record is None:
        return None
    return padded_tokens_of(read_recorded_tensor(record))


def pads_nothing(trace: Trace) -> bool:
    """Whether the outermost call certainly pads no token: its ``attention_mask`` keyword is a
    recorded ``[batch, tokens]`` mask letting every token through, or it passes none (``None``, or
    no keyword and no positional argument besides the first, which would be the ids)."""
    record = _keyword_attention_mask(trace)
    if record is None or (not record.is_tensor and record.text == "None"):
        inputs = trace.nodes[0].inputs if trace.nodes else ()
        return not any(given.sub_path.startswith("args.") and given.sub_path != "args.0" for given in inputs)
    record = _attention_mask(trace)
    if record is None or record.file is None:
        return False
    mask = read_recorded_tensor(record)
    return not mask.is_floating_point() and bool((mask == 1).all())


def pads_on_the_left_in_print(trace: Trace) -> bool:
    """Whether the outermost call's ``attention_mask`` keyword, as a summary trace prints it, has a
    row that starts with a padded token (a row torch's print leaves out is not seen)."""
    record = _attention_mask(trace)
    if record is None:
        return False
    starts = (_ROW_START.search(line) for line in record.value_lines)
    return any(start is not None and start.group(1) in ("0", "False") for start in starts)


def _attention_mask(trace: Trace) -> TensorRecord | None:
    """The outermost call's ``attention_mask`` keyword when it is a tensor of two dimensions."""
    record = _keyword_attention_mask(trace)
    return record if record is not None and record.shape is not None and len(record.shape) == 2 else None


def _keyword_attention_mask(trace: Trace) -> TensorRecord | None:
    inputs = trace.nodes[0].inputs if trace.nodes else ()
    return next((record for record in inputs if record.sub_path == "kwargs.attention_mask"), None)


def padded_tokens_of(attention_mask: object) -> torch.Tensor | None:
    """The same from a model's ``attention_mask`` argument itself (a ``[batch, tokens]`` tensor of
    0/1 or booleans; anything else pads nothing)."""
    if not isinstance(attention_mask, torch.Tensor) or attention_mask.dim() != 2:
        return None
    mask = attention_mask.detach().cpu()
    if mask.is_floating_point() or not ((mask == 0) | (mask == 1)).all():
        return None
    padded = mask == 0
    return padded if padded.any() else None


def only_at_padded_tokens(out_of_tolerance: torch.Tensor, padded: torch.Tensor) -> bool:
    """Whether every True element of ``out_of_tolerance`` lies at a padded token: its first
    dimension is the batch, and along some other dimension of the tokens' size every differing
    element sits at a token ``padded`` marks; or its first dimension is the tokens of every sequence
    one after the other (``[batch * tokens, ...]``: a mixture of experts' router, its weights and
    indices per token)."""
    batch, tokens = padded.shape
    if out_of_tolerance.dim() >= 1 and out_of_tolerance.shape[0] == batch * tokens != batch:
        out_of_tolerance = out_of_tolerance.reshape(batch, tokens, -1)
    if out_of_tolerance.dim() < 2 or out_of_tolerance.shape[0] != batch or not out_of_tolerance.any():
        return False
    for dim in range(1, out_of_tolerance.dim()):
        if out_of_tolerance.shape[dim] == tokens:
            at_token = out_of_tolerance.movedim(dim, 1).reshape(batch, tokens, -1).any(-1)
            if not (at_token & ~padded).any():
                return True
    return False


def differs_only_at_padded_tokens(
    expected: torch.Tensor, actual: torch.Tensor, atol: float, rtol: float, padded: torch.Tensor
) -> bool:
    """Whether every element of two same-shaped tensors that is out of tolerance lies at a padded token."""
    if expected.is_complex() or actual.is_complex():
        return False
    wide = torch.float64 if torch.float64 in (expected.dtype, actual.dtype) else torch.float32
    close = torch.isclose(actual.to(wide), expected.to(wide), rtol=rtol, atol=atol, equal_nan=True)
    return only_at_padded_tokens(~close, padded)
