"""Bisection: from the whole model down to the smallest call that is wrong on identical inputs.

Starting at the top-level call, each step replays the children of the current call in execution
order until one is wrong on its own recorded inputs, and descends into it. The search stops at a
call none of whose children is wrong: that call's own code (between its submodules, or a leaf's
computation) is where the bug is. Each step costs about one replay of the current call, so finding
a module deep in layer 3 of a bf16 model costs a few forwards, however far compare saw the
differences spread.
"""

from __future__ import annotations

from dataclasses import replace

from model_debugging.debugger.trace_format.records import TraceNode
from model_debugging.replay.result import ModuleReplay, ReplayVerdict
from model_debugging.replay.runner import Replayer


def bisect_trace(
    replayer: Replayer, diverged: frozenset[str] | None = None
) -> tuple[tuple[ModuleReplay, ...], ModuleReplay | None]:
    """Replay down the tree; return every replay made and the smallest wrong call (None if the top is correct).

    ``diverged``: reference paths compare did not find equal (with their ancestors); calls outside
    it are not replayed. None replays every child.
    """
    nodes = replayer.trace.nodes
    if not nodes:
        return (), None
    current = replayer.replay(nodes[0])
    replays = [current]
    if current.verdict is not ReplayVerdict.WRONG:
        return tuple(replays), None
    node = nodes[0]
    while True:
        skipped: list[str] = []
        wrong_child = None
        for child in replayer.children(node):
            if diverged is not None and child.module_path not in diverged:
                continue
            outcome = replayer.replay(child)
            replays.append(outcome)
            if outcome.verdict is ReplayVerdict.NOT_REPLAYED:
                skipped.append(child.module_path.rpartition(".")[2])
            elif outcome.verdict is ReplayVerdict.WRONG:
                wrong_child = child
                current = outcome
                break
        if wrong_child is None:
            return tuple(replays), replace(current, reason=_conclusion(replayer, node, current, skipped))
        node = wrong_child


def _conclusion(replayer: Replayer, node: TraceNode, found: ModuleReplay, skipped: list[str]) -> str:
    if not replayer.children(node):
        return "wrong on its recorded inputs, and it runs no recorded submodule or function"
    reason = (
        "its recorded submodules and functions are correct on identical inputs: the bug is in its own code"
    )
    if found.first_wrong:
        reason += f", in what runs before {found.first_wrong} (the first output out of tolerance inside it)"
    if skipped:
        reason += f"; or in {', '.join(skipped)}, which could not be replayed"
    return reason
