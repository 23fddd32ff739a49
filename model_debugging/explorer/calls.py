"""One trace as the rows of the page's call tree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from model_debugging.debugger.trace_format.records import Trace, TraceNode
from model_debugging.explorer.badges import Badge, jump_badges, non_finite_badges
from model_debugging.explorer.comparison_view import CallComparison
from model_debugging.explorer.tensor_view import TensorView, TextTable, tensor_view


@dataclass(frozen=True)
class CallView:
    """One module call: a row of the tree and the content of its detail pane.

    ``parent`` is the index of the parent row in the page's row list (-1 for the root);
    ``parent_path`` the module path of the parent call in its own trace (the row shows the path
    relative to it).
    """

    node: TraceNode
    parent: int
    inputs: tuple[TensorView, ...]
    outputs: tuple[TensorView, ...] | None
    badges: tuple[Badge, ...] = ()
    comparison: CallComparison | None = None
    pruned_before: int = 0  # numbered blocks missing just before this one (layer pruning)
    parent_path: str | None = None

    def to_json(self, values: TextTable, classes: TextTable) -> dict:
        """The row's data; printed values and the module class are indices into ``values`` / ``classes``."""
        node = self.node
        name = node.module_path
        if self.parent_path and name.startswith(self.parent_path + "."):
            name = name[len(self.parent_path) + 1 :]
        entry: dict = {
            "path": node.module_path,
            "name": name,
            "parent": self.parent,
            "call": node.call_index,
            "inputs": [tensor.to_json(values) for tensor in self.inputs],
            "outputs": None if self.outputs is None else [tensor.to_json(values) for tensor in self.outputs],
        }
        if node.module_class is not None:
            entry["cls"] = classes.add(node.module_class)
        if node.exception:
            entry["exception"] = node.exception
        if self.badges:
            entry["badges"] = [badge.to_json() for badge in self.badges]
        if self.comparison is not None:
            entry["comparison"] = self.comparison.to_json(values)
        if self.pruned_before:
            entry["prunedBefore"] = self.pruned_before
        return entry


def parent_indices(nodes: Sequence[TraceNode]) -> list[int]:
    """The parent of each node of a pre-order node list, from the depths (-1 for the root)."""
    parents: list[int] = []
    open_calls: list[int] = []  # the current path from the root, by index
    for index, node in enumerate(nodes):
        del open_calls[node.depth :]
        parents.append(open_calls[-1] if open_calls else -1)
        open_calls.append(index)
    return parents


def pruned_counts(nodes: Sequence[TraceNode], parents: Sequence[int]) -> dict[int, int]:
    """For a numbered block (``layers.5``) whose previous sibling block is not the one numbered just
    before it (``layers.0``: pruning kept the first and last), how many blocks are missing. None
    in a trace holding a run of three blocks or more, which pruning leaves nowhere: its gaps are
    modules not called (the experts no token was routed to)."""
    last_number: dict[tuple[int, str], int] = {}
    run_lengths: dict[tuple[int, str], int] = {}
    missing: dict[int, int] = {}
    for index, node in enumerate(nodes):
        head, _, number = node.module_path.rpartition(".")
        if not number.isdigit() or node.call_index:
            continue
        key = (parents[index], head)
        previous = last_number.get(key)
        if previous is not None and int(number) > previous + 1:
            missing[index] = int(number) - previous - 1
        last_number[key] = int(number)
        run_lengths[key] = run_lengths.get(key, 0) + 1
    return {} if any(length > 2 for length in run_lengths.values()) else missing


def trace_calls(trace: Trace) -> list[CallView]:
    """The rows of ``trace`` in execution order, with their badges and tensor views."""
    parents = parent_indices(trace.nodes)
    jumps = jump_badges(trace.nodes, parents)
    pruned = pruned_counts(trace.nodes, parents)
    calls = []
    for index, node in enumerate(trace.nodes):
        badges = non_finite_badges(node)
        if index in jumps:
            badges.append(jumps[index])
        calls.append(
            CallView(
                node=node,
                parent=parents[index],
                inputs=tuple(tensor_view(record) for record in node.inputs),
                outputs=None if node.outputs is None else tuple(tensor_view(r) for r in node.outputs),
                badges=tuple(badges),
                pruned_before=pruned.get(index, 0),
                parent_path=trace.nodes[parents[index]].module_path if parents[index] >= 0 else None,
            )
        )
    return calls
