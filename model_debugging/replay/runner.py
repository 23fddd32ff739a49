"""Running one recorded call of the reference on the candidate, alone, and judging what it returns.

The candidate's module (or function) gets the reference's recorded inputs (in the candidate's
dtype, through an argument adapter when one is given for it) and runs under ``torch.no_grad()``.
A call whose outputs the trace records is judged on them; a module with submodules on its
recorded leaves (:mod:`.leaves`). A call that cannot be made (its signature does not accept the
recorded arguments, an input cannot be rebuilt, the candidate raises on them) is *not replayed*,
with the reason: it says nothing about the candidate's numbers.
"""

from __future__ import annotations

from dataclasses import replace

from model_debugging.compare.call_ends import residual_sources
from model_debugging.compare.call_tree import CallTree
from model_debugging.debugger.trace_format.records import Trace, TraceNode
from model_debugging.debugger.trace_format.tensor_files import read_recorded_tensor
from model_debugging.replay.adapters import ArgumentAdapters, CannotCall
from model_debugging.replay.arguments import (
    Placement,
    Sources,
    UnrebuildableValue,
    flatten_output,
    rebuild_call,
)
from model_debugging.replay.block_ends import end_agrees, judge_end, next_in_stack
from model_debugging.replay.caches import CacheRebuilder
from model_debugging.replay.calling import candidate_call, run_call
from model_debugging.replay.findings import (
    Findings,
    FirstDifference,
    compare_outputs,
    noise_level,
    returned_part_paths,
)
from model_debugging.replay.judging import Tolerance
from model_debugging.replay.leaves import LeafHooks
from model_debugging.replay.noise import NoiseLevels
from model_debugging.replay.result import ModuleReplay, NodeKind, NoiseJudgement, ReplayVerdict
from model_debugging.replay.targets import CandidateIndex, NoCounterpart, Target, first_parameter


class Replayer:
    """Replays calls of one reference trace on one candidate model.

    Args:
        trace (`Trace`): the reference trace (``use_repr=False``, so that tensors can be read back).
        index (`CandidateIndex`): the candidate model, and how its parts match the reference's calls.
        tolerance (`Tolerance`): the per-tensor tolerance when no noise levels are given.
        noise (`NoiseLevels`, *optional*): the reference's own spread; it can excuse a difference.
        adapters (`ArgumentAdapters`, *optional*): how to call candidate modules with other signatures.
    """

    def __init__(
        self,
        trace: Trace,
        index: CandidateIndex,
        tolerance: Tolerance | None = None,
        noise: NoiseLevels | None = None,
        adapters: ArgumentAdapters | None = None,
    ):
        self.trace = trace
        self.index = index
        self._tolerance = tolerance or Tolerance()
        self._noise = noise
        self._adapters = adapters or ArgumentAdapters()
        self._caches = CacheRebuilder(trace, index.model)
        self._tree = CallTree.of(trace)
        self._correct_leaves: set[int] = set()  # orders of calls replayed correct on their own outputs
        # order -> the inputs the candidate changed in place, and where the first difference was seen
        self.modified_inputs: dict[int, tuple[str, ...]] = {}
        self.first_differences: dict[int, FirstDifference] = {}
        # order -> a recorded call before the first difference the candidate did not run (it may skip
        # it), and whether the candidate holds a module of its name
        self.skipped_calls: dict[int, tuple[str, bool]] = {}
        # order of a call whose outputs are not recorded -> the next call in its parent, when what it
        # returned is neither what that call received nor that less a residual
        self.unconfirmed_ends: dict[int, tuple[int, str | None]] = {}  # and its last call, if not run

    def children(self, node: TraceNode) -> list[TraceNode]:
        return [other for other in self.subtree(node) if other.depth == node.depth + 1]

    def subtree(self, node: TraceNode) -> tuple[TraceNode, ...]:
        """The calls made inside ``node``, in execution order."""
        return self.trace.nodes[node.order + 1 : self._tree.end[node.order]]

    def parent(self, node: TraceNode) -> TraceNode | None:
        parent = self._tree.parent[node.order]
        return None if parent < 0 else self.trace.nodes[parent]

    def contains(self, ancestor: TraceNode, order: int) -> bool:
        return ancestor.order < order < self._tree.end[ancestor.order]

    def replay(self, node: TraceNode) -> ModuleReplay:
        if node.exception is not None:
            return not_replayed(
                node, None, f"the reference call raised ({node.exception}): nothing to compare"
            )
        try:
            target = self.index.target(node)
        except NoCounterpart as error:
            return not_replayed(node, None, str(error))
        placement = self._placement(target)
        sources = Sources(
            placement,
            modules=lambda path: self.index.module_for(path)[1],
            objects=lambda record: self._caches.rebuild(node, record),
        )
        try:
            made = candidate_call(target, rebuild_call(node.inputs, sources), self._adapters)
        except UnrebuildableValue as error:
            return not_replayed(
                node, target.candidate_path, f"input {error.sub_path} cannot be rebuilt: {error.reason}"
            )
        except CannotCall as error:
            return not_replayed(node, target.candidate_path, str(error))
        findings = Findings()
        tolerance = replace(self._tolerance, computed_in=placement.dtype)
        hooks, reusable = None, False
        if node.outputs is None:
            leaves = [
                leaf for leaf in self.subtree(node) if leaf.outputs is not None and leaf.function is None
            ]
            if not leaves:
                return not_replayed(
                    node, target.candidate_path, "the trace records no outputs for it or its submodules"
                )
            skippable = self._correct_leaves - set(self.modified_inputs)
            hooks = LeafHooks(self.index, target.module, leaves, findings, tolerance, skippable, self._noise)
            if hooks.outside and not made.adapted:
                hooks.remove()
                leaf, name = hooks.outside[0]
                return not_replayed(
                    node,
                    target.candidate_path,
                    f"{target.candidate_path or 'the model'} computes only part of it: the counterpart of "
                    f"{self.index.relative(leaf.module_path)} ({name}) runs outside it; replay its parts, or give "
                    "it an argument adapter",
                )
        try:
            outcome = run_call(target.call, made.call)
        finally:
            if hooks is not None:
                hooks.remove()
        if outcome.error is not None:
            error = outcome.error
            underived = f"; {made.underived}" if made.underived else ""
            return not_replayed(
                node,
                target.candidate_path,
                f"the candidate raised {type(error).__name__} on the recorded inputs: {error}{underived}",
            )
        if outcome.modified:
            self.modified_inputs[node.order] = outcome.modified
            findings.details.append("modifies its inputs in place: " + ", ".join(outcome.modified))
        if hooks is not None and not hooks.ran:
            return not_replayed(
                node,
                target.candidate_path,
                f"none of its {len(hooks.leaves)} recorded submodule calls matches a module the candidate ran "
                "(other names: give replay the candidate's trace, or rename rules): nothing to compare",
            )
        output = outcome.output if target.output is None else target.output(outcome.output)
        if hooks is not None:
            hooks.missing()
            following = next_in_stack(self.trace.nodes, node, self._tree.end[node.order], self.parent(node))
            if following is not None:
                level = None if self._noise is None else self._noise.level(following, inputs=True)
                label = self.index.relative(following.module_path)
                judge_end(node, following, label, output, findings, tolerance, level)
            else:
                self._note_unconfirmed_end(node, output, tolerance, hooks)
        else:
            level = noise_level(self._noise, node, findings)
            compare_outputs(node, output, findings, "outputs", tolerance, level)
            # a leaf correct on its own is not run again inside its callers (they get its recorded
            # outputs), unless it returns a part of them (a router's (weights, indices)) in its own structure
            reusable = not returned_part_paths(node, dict(flatten_output(output)))[0]
        first = findings.first_difference()
        skipped = None
        if first is not None:
            self.first_differences[node.order] = first
            if hooks is not None and first.in_inputs:
                skipped = hooks.skipped_before(self.trace.nodes[first.order], self.index.aligned)
        if skipped is not None:
            self.skipped_calls[node.order] = skipped
        if hooks is not None and not findings.compared and first is None:
            # its submodules took other forms and what it returns is not recorded: nothing says it is correct
            return not_replayed(
                node,
                target.candidate_path,
                "nothing compared: " + "; ".join(findings.details or ["no value"]),
            )
        said = skipped is not None and self.skipped_said_above(node)  # bisection replays the parent first
        verdict = self._verdict(
            node, target.candidate_path, findings, None if said or not skipped else skipped[0]
        )
        verdict = replace(verdict, called_as=made.derived)
        if node.outputs is not None and verdict.verdict is ReplayVerdict.CORRECT and reusable:
            self._correct_leaves.add(node.order)
        return verdict

    def _note_unconfirmed_end(self, node: TraceNode, output, tolerance: Tolerance, hooks: LeafHooks) -> None:
        """Note ``node`` when what it returned is neither what the reference's next recorded call received
        (in its parent, or after it when it is its parent's last call) nor that less a residual: its end is
        then judged by an enclosing call's replay (:meth:`end_blame`)."""
        end = self._tree.end[node.order]
        following = self.trace.nodes[end] if end < len(self.trace.nodes) else None
        outer = None if following is None else self.parent(following)
        if outer is None:
            return
        holder = node  # the call of ``outer`` that ``node`` ends
        while self.parent(holder).order != outer.order:
            holder = self.parent(holder)
        earlier = [
            self.trace.nodes[order] for order in residual_sources(self._tree, outer.order, holder.order, end)
        ]
        last = hooks.leaves[-1]
        made = next((record for record in last.outputs or () if record.is_tensor and record.file), None)
        # as compare judges it: the reference hands on its last recorded call's output (plus a residual)
        handed_on = made is not None and end_agrees(read_recorded_tensor(made), following, earlier, tolerance)
        if handed_on and end_agrees(output, following, earlier, tolerance) is False:
            self.unconfirmed_ends[node.order] = (end, None if last.order in hooks.ran else last.module_path)

    def end_blame(self, node: TraceNode) -> str | None:
        """For a call correct on its recorded calls whose end is not confirmed, when the nearest enclosing
        call replayed first differs right after it (in the inputs of the first recorded call after it, or
        in its own outputs, with nothing recorded after ``node`` in it compared): why it is wrong at its end."""
        unconfirmed = self.unconfirmed_ends.get(node.order)
        ancestor = self.parent(node)
        while ancestor is not None and ancestor.order not in self.first_differences:
            ancestor = self.parent(ancestor)
        if unconfirmed is None or ancestor is None:
            return None
        first = self.first_differences[ancestor.order]
        if first.in_inputs and self.ends_before(node, first.order):
            seen = f"the inputs of {self.trace.nodes[first.order].module_path}"
        elif self.end_unseen(node, ancestor, first):
            seen = (
                f"its own outputs (given to {self.trace.nodes[self._tree.end[ancestor.order]].module_path})"
            )
        else:
            return None
        following, skipped = unconfirmed
        parent = self.parent(node)
        where = (
            f"the candidate never ran its last recorded call {skipped}: the port skips it, or computes it another way"
            if skipped
            else f"after its last recorded call, or in the code of {parent.module_path} "
            + ("between them" if self.contains(parent, following) else "after it")
        )
        return (
            f"its recorded submodules are correct on identical inputs, but what it returns (not recorded) is neither "
            f"what {self.trace.nodes[following].module_path} received nor that less a tensor recorded before it "
            f"(a residual), and {ancestor.module_path} first differs in {seen}: the bug is at its end: {where}"
        )

    def end_unseen(self, node: TraceNode, ancestor: TraceNode, first: FirstDifference) -> bool:
        """Whether ``ancestor``'s replay first differs in its own outputs (judged on what the next call
        received), and no recorded call after ``node`` inside it had its inputs compared: what ``node``
        returns (not recorded) may be what differs there."""
        if first.in_inputs or first.order != ancestor.order:
            return False
        after = self.trace.nodes[self._tree.end[node.order] : self._tree.end[ancestor.order]]
        return not any(call.order in first.inputs_compared for call in after)

    def ends_before(self, node: TraceNode, order: int) -> bool:
        """Whether the recorded leaf of ``order`` is the first after ``node``'s calls."""
        following = self.trace.nodes[self._tree.end[node.order] : order + 1]
        return (
            bool(following)
            and following[-1].order == order
            and not any(call.outputs is not None and call.function is None for call in following[:-1])
        )

    def skipped_said_above(self, node: TraceNode) -> bool:
        """Whether a call ``node`` runs in already names a call the port may skip."""
        ancestor = self.parent(node)
        while ancestor is not None and ancestor.order not in self.skipped_calls:
            ancestor = self.parent(ancestor)
        return ancestor is not None

    def _placement(self, target: Target) -> Placement:
        """The candidate's device and dtype: its module's, else the model's."""
        parameter = first_parameter(target.module, floating=True)
        if parameter is None:
            parameter = first_parameter(self.index.model, floating=True)
        return Placement() if parameter is None else Placement(parameter.device, parameter.dtype)

    def _verdict(
        self, node: TraceNode, candidate_path: str, findings: Findings, reason: str | None = None
    ) -> ModuleReplay:
        noise = None
        if findings.noise_ratio is not None:
            noise = NoiseJudgement(noise_max_abs=findings.noise_max_abs, ratio=findings.noise_ratio)
        within = findings.within and not findings.structural  # the noise is weighed point by point
        return ModuleReplay(
            module_path=node.module_path,
            candidate_path=candidate_path,
            call_index=node.call_index,
            kind=node_kind(node),
            verdict=ReplayVerdict.CORRECT if within else ReplayVerdict.WRONG,
            max_abs_diff=findings.max_abs,
            max_rel_diff=findings.max_rel,
            worst=findings.worst,
            first_wrong=findings.first_wrong,
            compared=findings.compared,
            reason=reason,
            noise=noise,
            details=tuple(findings.details),
        )


def not_replayed(node: TraceNode, candidate_path: str | None, reason: str) -> ModuleReplay:
    return ModuleReplay(
        module_path=node.module_path,
        candidate_path=candidate_path,
        call_index=node.call_index,
        kind=node_kind(node),
        verdict=ReplayVerdict.NOT_REPLAYED,
        reason=reason,
    )


def node_kind(node: TraceNode) -> NodeKind:
    return "module" if node.function is None else "function"
