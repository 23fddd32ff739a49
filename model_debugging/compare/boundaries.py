"""Comparing block boundaries only, for ports that move logic between modules.

A port may compute the same model with its steps in other modules: the embedding scale applied in
the model's forward instead of inside the embedding module, a norm folded into the next block.
Every module around the moved step then differs, although the model does not. At block
boundaries it agrees again: ``boundaries=True`` keeps only

- the numbered blocks (``layers.3``, ``h.0``, ``block.1``: calls with children whose path ends in a
  number), whose inputs are the previous block's outputs;
- the calls without children that run after a block and outside every block (the final norm,
  the LM head), and in any case the last call (the final output);
- calls whose outputs differ in kind, not in value (an output tensor on one side only, a literal
  that differs): no moving of logic explains those.

The divergence origin is then the first kept call that differs: a block whose inputs differ (the
difference is made in the block before it, or between the two), or a call after the blocks whose
outputs differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.call_result import ModuleComparison, ModuleStatus, ValueStatus
from model_debugging.compare.call_tree import CallTree


def _blocks(tree: CallTree) -> set[int]:
    return {
        index
        for index, path in enumerate(tree.relative_paths)
        if path.rpartition(".")[2].isdigit() and not tree.is_leaf(index)
    }


def _structural(row: ModuleComparison) -> bool:
    """Whether an output differs in kind: a tensor on one side only, a literal, a shape."""
    return any(
        value.place == "outputs"
        and value.counted
        and value.status in (ValueStatus.DIFFERS, ValueStatus.ONLY_REFERENCE, ValueStatus.ONLY_CANDIDATE)
        and value.max_abs_diff is None
        for value in row.values
    )


def boundary_rows(alignment: TraceAlignment, rows: Sequence[ModuleComparison]) -> list[ModuleComparison]:
    """The rows of the block boundaries (see the module docstring), renumbered in order."""
    tree = alignment.reference
    blocks = _blocks(tree)
    first_block = min(blocks, default=len(tree.trace.nodes))
    last = max(
        (
            i
            for i in range(len(tree.trace.nodes))
            if tree.is_leaf(i) and i not in alignment.identity_reference
        ),
        default=-1,
    )
    kept = []
    for row, pair in zip(rows, alignment.pairs, strict=True):
        call = pair.reference[0]
        inside_block = any(tree.contains(block, call) and block != call for block in blocks)
        after_blocks = call > first_block and tree.is_leaf(call) and not inside_block
        if call in blocks or after_blocks or last in pair.reference or _structural(row):
            kept.append(replace(row, index=len(kept)))
    return kept


def boundary_origin(rows: Sequence[ModuleComparison]) -> tuple[ModuleComparison | None, str | None]:
    """The origin among the kept rows: the first that differs, or the block before the first whose
    inputs differ (marked as differing); and where to look then."""
    previous_block = None
    for row in rows:
        if row.status is ModuleStatus.EQUAL:
            if not row.is_leaf:
                previous_block = row
            continue
        if row.inputs_match or row.is_leaf and not row.differing_inputs:
            return row, None
        labels = ", ".join(value.label for value in row.differing_inputs[:3]) or "its inputs"
        if previous_block is None:
            return row, f"the inputs of {row.module_path} differ ({labels}): the difference is made before it"
        marked = replace(
            previous_block,
            outputs_match=False,
            details=(f"its output, the inputs of {row.module_path}, differs: {labels}",),
            compared=row.compared,
            max_abs_diff=row.max_abs_diff,
            max_rel_diff=row.max_rel_diff,
            mean_abs_diff=row.mean_abs_diff,
        )
        note = f"the difference is made in {previous_block.module_path} or between it and {row.module_path}"
        return marked, note
    return None, None
