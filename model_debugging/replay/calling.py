"""Making one call of the candidate on a reference call's arguments, and seeing what it did to them.

The reference's rebuilt arguments become the candidate's through the target's own mapping (a
function paired with a module), a hand-written argument adapter, or, when no adapter is given and
the candidate's signature does not take them (or its model gave it an input in another form), the
candidate's own recorded call on the reference's values (a derived adapter, :mod:`.own_calls`); a
call the candidate's signature does not accept is never attempted (:class:`~model_debugging.replay.adapters.CannotCall`). The call runs
under ``torch.no_grad()``. Its tensor arguments are copied first and compared afterwards: a
candidate that modifies an input in place (``x.add_(...)``) is seen even when what it returns is right.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from model_debugging.replay.adapters import ArgumentAdapters, CannotCall, adapted_call, check_signature
from model_debugging.replay.arguments import RecordedCall, flatten_output
from model_debugging.replay.targets import Target


@dataclass(frozen=True)
class CandidateCall:
    """The arguments to give the candidate for one reference call, and how they were made: by a
    hand-written argument adapter (``adapted``), or from the candidate's own recorded call
    (``derived`` says so, and what was converted)."""

    call: RecordedCall
    adapted: bool = False
    derived: str | None = None
    # why a module whose model gave it an input in another form is given the reference's call as it is
    underived: str | None = None


def candidate_call(target: Target, call: RecordedCall, adapters: ArgumentAdapters) -> CandidateCall:
    """The arguments to give ``target`` for the reference's ``call`` (raises ``CannotCall``).

    A hand-written adapter wins. Without one, a module is called as its own model called it
    (:mod:`.own_calls`) when its signature does not take the reference's call, or when its model
    gave it an input in another form than the reference's (a padding mask for a 4-D one); in the
    second case, when that call cannot be derived, the reference's call is made as it is."""
    if target.arguments is not None:
        call = target.arguments(call)
    elif target.module is not None and target.call is target.module:
        shown = f"{target.candidate_path or 'the model'} ({type(target.module).__name__}).forward"
        adapter = adapters.find(target.module, target.candidate_path)
        if adapter is not None:
            call = adapted_call(adapter, target.module, call)
            check_signature(target.module.forward, call, shown)
            return CandidateCall(call, adapted=True)
        own = target.own_call
        try:
            check_signature(target.module.forward, call, shown)
        except CannotCall as refused:
            if own is None:
                raise
            try:
                call, derived = own(call)
            except CannotCall as error:
                raise CannotCall(
                    f"{refused}; nor can it be called as its own model called it: {error}"
                ) from None
            check_signature(target.module.forward, call, shown)
            return CandidateCall(call, derived=derived)
        if own is not None and own.in_other_forms:
            try:
                own_call, derived = own(call)
                check_signature(target.module.forward, own_call, shown)
            except CannotCall as error:
                return CandidateCall(
                    call, underived=f"it cannot be called as its own model called it: {error}"
                )
            return CandidateCall(own_call, derived=derived)
        return CandidateCall(call)
    check_signature(target.call, call, target.candidate_path)
    return CandidateCall(call)


@dataclass(frozen=True)
class Outcome:
    """What one call returned, or the exception it raised, and the inputs it modified in place."""

    output: Any = None
    error: Exception | None = None
    modified: tuple[str, ...] = ()  # e.g. "args.0 (max change 100)"


def run_call(function: Callable, call: RecordedCall) -> Outcome:
    """Run ``function(*call.args, **call.kwargs)`` without gradients, watching its tensor arguments."""
    given = {"args": call.args, "kwargs": call.kwargs}
    before = {path: value.clone() for path, value in flatten_output(given) if isinstance(value, torch.Tensor)}
    try:
        with torch.no_grad():
            output = function(*call.args, **call.kwargs)
    except Exception as error:  # the candidate failing on the recorded inputs is reported, not raised
        return Outcome(error=error)
    after = dict(flatten_output(given))
    return Outcome(output=output, modified=tuple(_changes(before, after)))


def _changes(before: dict[str, torch.Tensor], after: dict[str, Any]):
    for path, saved in before.items():
        now = after[path]
        if now.shape != saved.shape:
            yield f"{path} (resized to {list(now.shape)})"
            continue
        inexact = now.is_floating_point() or now.is_complex()
        same = (now == saved) | (now.isnan() & saved.isnan()) if inexact else now == saved
        if bool(same.all()):
            continue
        if inexact:
            change = float((now - saved).abs().double().nan_to_num(nan=float("inf")).max())
            yield f"{path} (max change {change:.4g})"
        else:
            yield f"{path} ({int((~same).sum())} elements changed)"
