"""Pairing the leaf calls the tree alignment left over, across levels.

A port often moves a module up or down a level: T5's relative position bias is an embedding inside
the first block's attention in the reference and one embedding per stack in a port, the token
embedding sits inside each stack in the reference and at the top of a port. Such a leaf finds no
partner among its siblings' counterparts. After the tree alignment, every leaf left over is
looked for under the counterpart of its nearest paired ancestor, then of the next one up:

- a leaf of the same kind (:mod:`.kinds`) and the same input and output shapes, once dimensions of
  size 1 are dropped (position ids ``[1, 8]`` against ``arange(8)``);
- or a projection whose output holds the same elements in another layout (a ``Conv2d`` output
  ``[2, 32, 4, 4]`` against a ``Linear`` output ``[2, 16, 32]``: patches embedded with unfold and a
  Linear instead of a Conv2d).

It pairs when it is the only such leaf there and the leaf is the only one of its side that could
pair with it; several candidates are told apart by the statistics of their outputs, else left
unpaired.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from model_debugging.compare.call_result import AlignmentKind
from model_debugging.compare.call_tree import CallTree
from model_debugging.compare.forms import layout_permutation, squeezed
from model_debugging.compare.fused import TensorSignature, first_tensor, signature, single_output
from model_debugging.compare.kinds import compatible_kinds, kind_of


def _could_pair(reference: CallTree, left: int, candidate: CallTree, right: int) -> bool:
    left_node, right_node = reference.node(left), candidate.node(right)
    left_kind, right_kind = kind_of(left_node), kind_of(right_node)
    if not compatible_kinds(left_kind, right_kind):
        return False
    left_output, right_output = single_output(reference, left), single_output(candidate, right)
    if left_output is None or right_output is None:
        return False
    inputs = (signature(first_tensor(left_node.inputs)), signature(first_tensor(right_node.inputs)))
    if _same_but_ones(*inputs) and _same_but_ones(signature(left_output), signature(right_output)):
        return True
    return (
        left_kind == right_kind == "projection"
        and left_output.dtype == right_output.dtype
        and layout_permutation(left_output.shape, right_output.shape) is not None
    )


def _same_but_ones(left: TensorSignature, right: TensorSignature) -> bool:
    """The same dtype and shape, once the dimensions of size 1 are dropped."""
    if left is None or right is None:
        return left == right
    return left[1] == right[1] and squeezed(left[0]) == squeezed(right[0])


def leftover_pairs(
    reference: CallTree,
    candidate: CallTree,
    partners: Mapping[int, int],
    free: Callable[[int, int], bool],
    outputs_agree: Callable[[int, int], bool],
) -> list[tuple[AlignmentKind, tuple[int, ...], tuple[int, ...]]]:
    """Pairs of leftover leaves (``free(side, call)``), as (kind, reference calls, candidate calls).

    ``partners`` maps the reference calls paired one to one to their candidate calls;
    ``outputs_agree(reference_call, candidate_call)`` compares the outputs' statistics.
    """
    sides = (reference, candidate)
    leftovers = [
        [index for index in range(len(tree.trace.nodes)) if tree.is_leaf(index) and free(side, index)]
        for side, tree in enumerate(sides)
    ]
    taken: tuple[set[int], set[int]] = (set(), set())
    pairs = []
    for left in leftovers[0]:
        ancestor, options = reference.parent[left], []
        while ancestor >= 0 and not options:
            if ancestor in partners:
                region = partners[ancestor]
                options = [
                    right
                    for right in leftovers[1]
                    if right not in taken[1]
                    and candidate.contains(region, right)
                    and _could_pair(reference, left, candidate, right)
                ]
                if options:
                    break
            ancestor = reference.parent[ancestor]
        if len(options) > 1:
            options = [right for right in options if outputs_agree(left, right)]
        if len(options) != 1:
            continue
        right = options[0]
        rivals = [
            other
            for other in leftovers[0]
            if other != left
            and other not in taken[0]
            and ancestor >= 0
            and reference.contains(ancestor, other)
            and _could_pair(reference, other, candidate, right)
        ]
        if rivals and not (
            outputs_agree(left, right) and not any(outputs_agree(other, right) for other in rivals)
        ):
            continue
        taken[0].add(left)
        taken[1].add(right)
        pairs.append((AlignmentKind.INFERRED, (left,), (right,)))
    return pairs


def why_unaligned(tree: CallTree, index: int, other: str, paired: set[int]) -> str:
    """Why the call ``index`` found no ``other`` call to pair with: what it takes and makes, and
    under which paired ancestor (``paired``: the calls of its side that did pair) it was looked for."""
    node = tree.node(index)
    given = first_tensor(node.inputs)
    taken = (
        f"input {list(given.shape)} {given.dtype}" if given is not None and given.shape else "no tensor input"
    )
    output = single_output(tree, index)
    made = f", output {list(output.shape)} {output.dtype}" if output is not None else ""
    parent = tree.parent[index]
    while parent >= 0 and parent not in paired:  # a call with no counterpart of its own was looked through
        parent = tree.parent[parent]
    where = tree.node(parent).module_path if parent >= 0 else "the model"
    return f"no {other} call left under the counterpart of {where} has its {taken}{made}"
