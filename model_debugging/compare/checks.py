"""What a verdict needs beyond the pairs: were the final outputs compared, and were the traces recorded alike.

The debugger records the outputs of calls without children only, so the model's output is (at
best) the output of the last such call on each side (the LM head, a classifier). A verdict of
equivalence needs each side's last call paired: a port whose last call has no counterpart (a
module the reference does not have, a second call of a module) could return anything.
"""

from __future__ import annotations

from collections import defaultdict

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.call_tree import CallTree
from model_debugging.compare.matching import describe_call
from model_debugging.compare.padding import pads_on_the_left_in_print


def _last_call(tree: CallTree, identities: tuple[int, ...]) -> int | None:
    skipped = set(identities)
    return next(
        (
            index
            for index in reversed(range(len(tree.trace.nodes)))
            if tree.is_leaf(index) and index not in skipped
        ),
        None,
    )


def final_output_note(alignment: TraceAlignment) -> str | None:
    """None when the last call of each side (what makes the final output) is paired, else why the
    final outputs were not compared."""
    missing = []
    for side, tree, identities, paired in (
        (
            "reference",
            alignment.reference,
            alignment.identity_reference,
            {i for p in alignment.pairs for i in p.reference},
        ),
        (
            "candidate",
            alignment.candidate,
            alignment.identity_candidate,
            {i for p in alignment.pairs for i in p.candidate},
        ),
    ):
        last = _last_call(tree, identities)
        if last is None:
            missing.append(f"the {side} trace records no call without children")
        elif last not in paired:
            missing.append(f"the {side}'s last call {describe_call(tree.node(last))} has no counterpart")
    if not missing:
        return None
    return f"the final outputs were not compared: {'; '.join(missing)}"


def _numbered_runs(tree: CallTree) -> dict[tuple[int, str], list[int]]:
    """The numbers of numbered blocks (``layers.3``), per parent call and list name."""
    runs: dict[tuple[int, str], list[int]] = defaultdict(list)
    for index, path in enumerate(tree.relative_paths):
        head, _, number = path.rpartition(".")
        if number.isdigit() and not tree.is_leaf(index) and tree.node(index).call_index == 0:
            runs[tree.parent[index], head].append(int(number))
    return runs


def _pruned(tree: CallTree) -> bool:
    """Whether a run of numbered blocks skips numbers (``do_prune_layers`` keeps the first and last).
    A trace holding a run of three blocks or more was not pruned: there the gaps are modules not
    called (the experts no token was routed to)."""
    runs = _numbered_runs(tree).values()
    return all(len(numbers) <= 2 for numbers in runs) and any(
        numbers != list(range(numbers[0], numbers[0] + len(numbers))) for numbers in runs
    )


def trace_warnings(alignment: TraceAlignment, diverged: bool) -> tuple[str, ...]:
    """Warnings about traces that may not be comparable as recorded (``diverged``: a compared call
    differs, which padded tokens may explain)."""
    warnings = []
    pruned = [_pruned(tree) for tree in (alignment.reference, alignment.candidate)]
    if pruned[0] != pruned[1]:
        which = "reference" if pruned[0] else "candidate"
        warnings.append(
            f"only the {which} trace was pruned (numbered layers are missing): trace both with the same "
            "do_prune_layers (False compares every layer)"
        )
    classes = [
        tree.node(0).module_class if tree.trace.nodes else None
        for tree in (alignment.reference, alignment.candidate)
    ]
    paths = [set(tree.relative_paths) for tree in (alignment.reference, alignment.candidate)]
    if None not in classes and classes[0] != classes[1] and paths[0] == paths[1] and len(paths[0]) > 1:
        warnings.append(
            f"the traces come from different model classes ({classes[0]}, {classes[1]}) with the same module "
            "paths: calls were paired by path; check that these are the models you meant to compare"
        )
    traces = (alignment.reference.trace, alignment.candidate.trace)
    if diverged and any(trace.mode != "tensors" for trace in traces) and pads_on_the_left_in_print(traces[0]):
        warnings.append(
            "the model's attention_mask pads tokens on the left: a causal model's padded tokens attend to "
            "nothing and correct implementations differ there, which summary statistics cannot set aside; "
            "trace both with use_repr=False to compare real tokens only"
        )
    return tuple(warnings)
