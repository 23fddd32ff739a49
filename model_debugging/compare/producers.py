"""Which call without a counterpart made what the first call with differing inputs received.

When a port forgets a call (the final norm before the LM head, an encoder's last norm), no call of
the candidate matches it: it stays unaligned, and the first paired call after it (the LM head, the
decoder's first layer) is the first whose inputs differ. In the reference, that call received the
forgotten call's output: the same tensor (statistics and values equal), or one position of it (a
classifier given the first token). The recorded values tell which unaligned call that is, with no
help from names; and when the candidate's call received what the forgotten call was given, the port
skips it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.call_result import ModuleComparison
from model_debugging.compare.call_tree import tensor_records
from model_debugging.compare.forms import Form
from model_debugging.compare.fused import first_tensor
from model_debugging.compare.matching import describe_call
from model_debugging.compare.numeric import PairComparer
from model_debugging.debugger.trace_format.records import TensorRecord
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor

_POSITIONS = (0, -1)  # the positions a pooled value is taken from: the first token (CLS), the last


@dataclass(frozen=True)
class Producer:
    """The unaligned reference call ``call`` made the value ``label`` of the first differing call,
    whole (``position`` "") or at ``position`` (``[:, 0]``); ``skipped``: the candidate's call got
    what ``call`` was given instead."""

    call: int
    label: str
    position: str
    skipped: bool

    def describe(self, alignment: TraceAlignment, receiver: str) -> str:
        name = describe_call(alignment.reference.node(self.call))
        made = f"its output{self.position}" if self.position else "its output"
        text = (
            f"{name} (no counterpart in the candidate) made what {receiver} receives as {self.label} ({made})"
        )
        if self.skipped:
            text += f", and the candidate's {receiver} received what {name} was given: the port skips it"
        return text


def find_producer(
    alignment: TraceAlignment,
    rows: Sequence[ModuleComparison],
    outer: int,
    first_differing: int,
    comparer: PairComparer,
) -> Producer | None:
    """The last unaligned reference call inside row ``outer``'s call that ran before row
    ``first_differing``'s and made one of its differing inputs (None when none did)."""
    tree = alignment.reference
    container = alignment.pairs[outer].reference[0]
    call = alignment.pairs[first_differing].reference[0]
    differing = rows[first_differing].differing_inputs
    received = {record.sub_path: record for record in tensor_records(tree.node(call).inputs)}
    for index in sorted(alignment.unaligned_reference, reverse=True):
        if not (container < index < call and tree.contains(container, index)):
            continue
        for value in differing:
            given = received.get(value.reference)
            for made in tensor_records(tree.node(index).outputs):
                position = _made(made, given) if given is not None else None
                if position is not None:
                    skipped = _skipped(alignment, first_differing, value.candidate, index, position, comparer)
                    return Producer(index, value.label, position, skipped)
    return None


def _skipped(
    alignment: TraceAlignment,
    row: int,
    sub_path: str | None,
    producer: int,
    position: str,
    comparer: PairComparer,
) -> bool:
    """Whether the candidate's call of ``row`` received at ``sub_path`` what ``producer`` was given
    (taken at the same ``position``), within the comparison's tolerances."""
    candidate_call = alignment.candidate.node(alignment.pairs[row].candidate[0])
    got = next((r for r in tensor_records(candidate_call.inputs) if r.sub_path == sub_path), None)
    given = first_tensor(alignment.reference.node(producer).inputs)
    if got is None or given is None:
        return False
    if comparer.mode != "tensors":
        return position == "" and given.shape == got.shape and comparer.agree(given, got, Form.SAME)

    def within_tolerance(expected: torch.Tensor, actual: torch.Tensor) -> bool:
        return comparer.compare_tensors(expected, actual)[0]

    return _taken_from(given, got, within_tolerance) == position


def _made(output: TensorRecord, received: TensorRecord) -> str | None:
    """Where the value a call ``received`` sits in another call's ``output`` of the same trace (see
    ``_taken_from``). The same tensor has the same statistics: they rule most calls out before any
    file is read, and without tensor files they alone tell a value passed whole."""
    if output.shape is None or received.shape is None or output.dtype != received.dtype:
        return None
    recorded = (output.statistics or output.stats, received.statistics or received.stats)
    if output.shape == received.shape and recorded[0] and recorded[1] and recorded[0] != recorded[1]:
        return None
    if output.file is None or received.file is None:
        return "" if output.shape == received.shape and recorded[0] and recorded[0] == recorded[1] else None
    return _taken_from(output, received, torch.equal)


def _taken_from(made: TensorRecord, given: TensorRecord, same) -> str | None:
    """Where ``given`` sits in ``made`` (both with tensor files), ``same`` telling two tensors equal:
    ``""`` when it is ``made``, ``"[:, 0]"`` when it is one position of it (see ``_POSITIONS``),
    None when neither."""
    if made.shape is None or given.shape is None or made.file is None or given.file is None:
        return None
    if made.shape == given.shape:
        return "" if same(read_recorded_tensor(made), read_recorded_tensor(given)) else None
    if len(made.shape) != len(given.shape) + 1:
        return None
    whole = part = None
    for dim in range(len(made.shape)):
        if made.shape[:dim] + made.shape[dim + 1 :] != given.shape:
            continue
        if whole is None:
            whole, part = read_recorded_tensor(made), read_recorded_tensor(given)
        for position in _POSITIONS:
            if same(whole.select(dim, position), part):
                return f"[{', '.join([':'] * dim + [str(position)])}]"
    return None
