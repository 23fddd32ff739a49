"""Bisection: from the whole model (or a given call) down to the smallest call that is wrong on identical inputs.

Starting at the top-level call, each step replays the children of the current call in execution
order until one is wrong on its own recorded inputs, and descends into it. A child that cannot be
replayed alone (no counterpart in the candidate: a wrapper the port does not have; another
signature; an input that cannot be rebuilt) is looked through: its children are tried in its
place. The search stops at a call none of whose children is wrong, and says where the bug is:

- a child that returned the right values but modified one of its inputs in place, before the
  first difference inside the call (the reference's later calls did not see that change);
- else, when the first difference lies inside a child that could not be replayed alone (going up
  from where it was seen, past calls that are correct alone and wrappers the candidate lacks):
  that child's own code when it got the recorded inputs, else its own code or what it is given
  (the call itself is then what is named; an argument adapter lets replay run the child alone);
- else the call's own code, before the first output out of tolerance inside it; first, when the
  difference is in the inputs of a call and compare's alignment is given, the call without a
  counterpart in the candidate that made those inputs (a final norm the port forgets: see
  :mod:`.forgotten`).

Each step costs about one replay of the current call, so finding a module deep in layer 3 of a
bf16 model costs a few forwards, however far compare saw the differences spread.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace

from model_debugging.debugger.trace_format.records import TraceNode
from model_debugging.replay.findings import FirstDifference
from model_debugging.replay.forgotten import ForgottenCalls
from model_debugging.replay.result import ModuleReplay, ReplayVerdict
from model_debugging.replay.runner import Replayer
from model_debugging.replay.targets import NoCounterpart


@dataclass(frozen=True)
class Bisection:
    """Every replay made, the smallest call found wrong (None if none), and the module the bug is placed in."""

    replays: tuple[ModuleReplay, ...]
    smallest_wrong: ModuleReplay | None
    bug_in: str | None


def bisect_trace(
    replayer: Replayer,
    starts: Sequence[TraceNode],
    diverged: frozenset[str] | None = None,
    forgotten: ForgottenCalls | None = None,
) -> Bisection:
    """Replay down the tree from the first of ``starts`` that is wrong.

    ``diverged``: reference paths compare did not find equal (with their ancestors); calls outside
    it are not replayed. None replays every child. ``forgotten``: the calls compare found the
    candidate lacks, from the same comparison.
    """
    replays: list[ModuleReplay] = []
    node = current = None
    for start in starts:
        outcome = replayer.replay(start)
        replays.append(outcome)
        if outcome.verdict is ReplayVerdict.WRONG:
            node, current = start, outcome
            break
    if node is None:
        return Bisection(tuple(replays), None, None)
    while True:
        step = _Step(replayer, node, diverged)
        replays += step.replays
        if step.wrong is None:
            return _conclusion(replayer, node, current, step, replays, forgotten)
        node, current = step.wrong


class _Step:
    """The children of one wrong call replayed in order (looking through those that cannot be replayed)."""

    def __init__(self, replayer: Replayer, node: TraceNode, diverged: frozenset[str] | None):
        self.replays: list[ModuleReplay] = []
        self.tried: dict[int, ModuleReplay] = {}  # by order
        self.wrong: tuple[TraceNode, ModuleReplay] | None = None
        first = replayer.first_differences.get(node.order)
        queue = deque(replayer.children(node))
        while queue:
            child = queue.popleft()
            # compare cannot see a call's end when its outputs are not recorded (it has children): the
            # call right before the first difference is replayed even when compare found it equal
            ends_there = (
                first is not None
                and bool(replayer.children(child))
                and replayer.index.paired(child)
                and (
                    replayer.ends_before(child, first.order)
                    if first.in_inputs
                    else replayer.end_unseen(child, node, first)  # ``node``'s own end differs
                )
            )
            if diverged is not None and child.module_path not in diverged and not ends_there:
                continue
            outcome = replayer.replay(child)
            blame = replayer.end_blame(child) if outcome.verdict is ReplayVerdict.CORRECT else None
            if blame is not None:  # correct on its recorded calls, not at its end
                outcome = replace(outcome, verdict=ReplayVerdict.WRONG, reason=blame)
            self.replays.append(outcome)
            self.tried[child.order] = outcome
            if outcome.verdict is ReplayVerdict.WRONG:
                self.wrong = (child, outcome)
                return
            if outcome.verdict is ReplayVerdict.NOT_REPLAYED:
                queue.extendleft(reversed(replayer.children(child)))


def _conclusion(
    replayer: Replayer,
    node: TraceNode,
    found: ModuleReplay,
    step: _Step,
    replays: list[ModuleReplay],
    forgotten: ForgottenCalls | None,
) -> Bisection:
    if not replayer.children(node):
        reason = "wrong on its recorded inputs, and it runs no recorded submodule or function"
        return Bisection(tuple(replays), replace(found, reason=reason), node.module_path)
    if node.order in replayer.unconfirmed_ends and found.reason:  # wrong at its end, as its parent showed
        return Bisection(tuple(replays), found, node.module_path)
    first = replayer.first_differences.get(node.order)
    modifiers = [
        (order, replay)
        for order, replay in step.tried.items()
        if order in replayer.modified_inputs
        and replay.verdict is ReplayVerdict.CORRECT
        and (first is None or order < first.order)
    ]
    if modifiers:
        order, replay = modifiers[-1]  # the last one before the first difference
        blamed = side_effect_blame(replay, replayer.modified_inputs[order], found)
        replays[replays.index(replay)] = blamed
        return Bisection(tuple(replays), blamed, replay.module_path)
    before = (
        f", before {found.first_wrong} (the first output out of tolerance inside it)"
        if found.first_wrong
        else ""
    )
    if first is not None and first.order == node.order:  # its own outputs, judged on the next block's inputs
        reason = (
            f"its recorded submodules and functions are correct on identical inputs, but not its "
            f"{found.first_wrong}: the bug is at its end, {_after_last_call(replayer, node)}"
        )
        return Bisection(tuple(replays), replace(found, reason=reason), node.module_path)
    holder = _unreplayable_holder(replayer, node, first, step.tried)
    if holder is not None:
        held, confident = holder
        why = step.tried[held.order].reason
        if confident:
            reason = (
                f"the first difference inside it is in {held.module_path}, which got its recorded inputs but "
                f"could not be replayed alone: the bug is in its own code{before}. {why}"
            )
            return Bisection(tuple(replays), replace(found, reason=reason), held.module_path)
        where = f" ({found.first_wrong})" if found.first_wrong else ""
        given = _unrecorded_end_before(replayer, held, first)
        reason = (
            f"its first difference{where} lies in {held.module_path}, which could not be replayed alone: "
            f"the bug is in its own code or in what it is given{given} (an argument adapter for it lets "
            f"replay tell which). {why}"
        )
        return Bisection(tuple(replays), replace(found, reason=reason), node.module_path)
    reason = f"its recorded submodules and functions are correct on identical inputs: the bug is in its own code{before}"
    producer = (
        forgotten.named(node.order, first.order)
        if forgotten is not None and first is not None and first.in_inputs and before
        else None
    )
    nodes = replayer.trace.nodes
    entered = replayer.parent(nodes[first.order]) if first is not None and first.in_inputs else None
    ending = (
        ""
        if entered is None or entered.order == node.order
        else _unrecorded_end_before(replayer, entered, first)
    )
    held = replayer.skipped_calls.get(node.order, ("", False))
    skipped = held[0] if producer is None and before and held[1] else None  # a module it holds, never called
    if producer is not None or skipped is not None:  # a call the port forgot made what the first one got
        reason = (
            f"its recorded submodules and functions are correct on identical inputs: the bug is in its own "
            f"code: {producer or skipped}; or else{before.removeprefix(',')}"
        )
    elif ending:  # a block correct alone got other inputs: the block before it ends wrongly, unrecorded
        reason = (
            f"its recorded submodules and functions are correct on identical inputs; its first difference "
            f"({found.first_wrong}) lies in {entered.module_path}, correct alone{ending}"
        )
    elif first is not None and first.in_inputs and (after := _after_block(replayer, nodes[first.order])):
        reason = (  # the final norm after the last block: that block's end, as compare names it
            f"its recorded submodules and functions are correct on identical inputs; its first difference "
            f"({found.first_wrong}) is in the inputs of {nodes[first.order].module_path}{after}"
        )
    skipped = [
        replay.module_path.rpartition(".")[2]
        for order, replay in step.tried.items()
        if replay.verdict is ReplayVerdict.NOT_REPLAYED and not replayer.children(replayer.trace.nodes[order])
    ]
    if skipped:
        reason += f"; or in {', '.join(skipped)}, which could not be replayed"
    return Bisection(tuple(replays), replace(found, reason=reason), node.module_path)


def _unreplayable_holder(
    replayer: Replayer, node: TraceNode, first: FirstDifference | None, tried: dict[int, ModuleReplay]
) -> tuple[TraceNode, bool] | None:
    """The call inside ``node`` whose own code may hold the first difference, when it could not be
    replayed alone, and whether it surely does (its inputs were the recorded ones).

    From the call where the difference was seen (its parent, when seen in its inputs), go up: a
    call that is correct alone got other inputs than recorded, and a reference wrapper the
    candidate lacks has no code of its own, so the search goes on above them; the first call that
    could not be replayed alone is the holder; reaching ``node`` means ``node``'s own code.
    """
    if first is None:
        return None
    nodes = replayer.trace.nodes
    current = nodes[first.order]
    if first.in_inputs:
        current = replayer.parent(current)
    while current is not None and current.order != node.order:
        replay = tried.get(current.order)
        if (
            replay is not None
            and replay.verdict is ReplayVerdict.NOT_REPLAYED
            and replay.candidate_path is not None
        ):
            return current, current.order in first.inputs_compared
        current = replayer.parent(current)
    return None


def _unrecorded_end_before(replayer: Replayer, held: TraceNode, first: FirstDifference) -> str:
    """When the first difference is in the inputs of the first call recorded inside ``held`` and
    the call before ``held`` has children (its outputs, often ``held``'s inputs, are not
    recorded): a clause naming that call's end, the likelier place. Else an empty string."""
    inside = replayer.subtree(held)
    if not first.in_inputs or not inside or inside[0].order != first.order:
        return ""
    earlier = _sibling_before(replayer, held)
    if earlier is None or not replayer.children(earlier):
        return ""
    return f": already in the inputs of the first call inside it, so likely in {_end_of(replayer, earlier)}"


def _after_block(replayer: Replayer, call: TraceNode) -> str:
    """When the call just before ``call`` is a numbered block (``layers.1``, with children: its
    outputs are not recorded), a clause naming that block's end, the likely place of a difference
    in ``call``'s inputs (the final norm's, after a last block whose mixture of experts is wrong).
    Else an empty string."""
    earlier = _sibling_before(replayer, call)
    if (
        earlier is None
        or not replayer.children(earlier)
        or not earlier.module_path.rpartition(".")[2].isdigit()
    ):
        return ""
    return f": likely in {_end_of(replayer, earlier)}"


def _sibling_before(replayer: Replayer, call: TraceNode) -> TraceNode | None:
    parent = replayer.parent(call)
    earlier = [other for other in replayer.children(parent) if other.order < call.order] if parent else []
    return earlier[-1] if earlier else None


def _end_of(replayer: Replayer, earlier: TraceNode) -> str:
    """``earlier``'s end (a call with children: its outputs are not recorded), and its last call."""
    return f"the outputs of {earlier.module_path} (not recorded), made at its end, {_after_last_call(replayer, earlier)}"


def _after_last_call(replayer: Replayer, call: TraceNode) -> str:
    last = replayer.children(call)[-1]
    if not replayer.children(last):
        return "after its last recorded call"
    # a last call with calls of its own: its outputs are not recorded either
    inner = replayer.children(last)[-1]
    if not replayer.children(inner):
        return f"in its last call {last.module_path} (not recorded either) or after it"
    try:
        replayer.index.target(inner)
    except NoCounterpart:  # experts run in one call (a mixture's 3D weights), the port's one by one
        return (
            f"in its last call {last.module_path} (not recorded either), whose own last call {inner.module_path} "
            "has no counterpart in the candidate and records no outputs, so replay cannot check it alone, "
            "or after it"
        )
    return f"in its last call {last.module_path} (not recorded either) or after it"


def side_effect_blame(replay: ModuleReplay, changed: tuple[str, ...], parent: ModuleReplay) -> ModuleReplay:
    """``replay`` (correct outputs, inputs modified in place) made wrong: its parent differs after it."""
    where = f" at {parent.first_wrong}" if parent.first_wrong else ""
    reason = (
        f"returns the reference's outputs, but modifies its inputs in place ({', '.join(changed)}); "
        f"{parent.module_path} then differs{where}: the reference's later calls do not see that change"
    )
    return replace(replay, verdict=ReplayVerdict.WRONG, reason=reason)
