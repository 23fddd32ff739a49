"""What the recorded values say about two calls: the evidence the alignment weighs.

Statistics from the JSON answer first (no tensor file is read): the same tensor has the same
statistics, so calls whose inputs or outputs agree in them are very likely to compute the same
thing. Tensor files are read only to confirm an identity call, to tell apart leaves of the same
shapes, or to compare a tensor with one broadcast to its shape.
"""

from __future__ import annotations

import math

from model_debugging.compare.arguments import returned_part
from model_debugging.compare.call_tree import CallTree, tensor_records
from model_debugging.compare.forms import Form, flattened, form_of
from model_debugging.compare.fused import concatenated_statistics, first_tensor, single_output
from model_debugging.compare.numeric import GroupDiff, PairComparer
from model_debugging.compare.siblings import Item
from model_debugging.debugger.trace_format.records import TensorRecord


class Evidence:
    """Agreement between calls of ``trees`` (reference, candidate), judged with ``comparer``'s tolerances."""

    def __init__(self, trees: tuple[CallTree, CallTree], comparer: PairComparer):
        self.trees = trees
        self.comparer = comparer
        # statistics from the JSON rule most non-identities out before any tensor file is read
        self.statistics_comparer = PairComparer(
            comparer.atol, comparer.rtol, "stats", atol_per_rms=comparer.atol_per_rms
        )
        self._agreements: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[bool, bool]] = {}
        self._values: dict[tuple[int, int], bool] = {}  # the alignment asks again for each option it weighs

    def agreement(self, left: Item, right: Item) -> tuple[bool, bool]:
        """Whether the first inputs, and the outputs, of two items agree in their statistics."""
        key = (left.calls, right.calls)
        if key not in self._agreements:
            inputs = [
                first_tensor(self.trees[side].node(item.calls[0]).inputs)
                for side, item in ((0, left), (1, right))
            ]
            outputs = [self._output_records(side, item) for side, item in ((0, left), (1, right))]
            part = returned_part(left.outputs, right.outputs)
            if part is not None:  # compared on the tensors both return
                outputs = [[outputs[0][i] for i, _ in part], [outputs[1][j] for _, j in part]]
            self._agreements[key] = (
                None not in inputs and self.statistics_agree(*inputs),
                len(outputs[0]) == len(outputs[1]) > 0
                and all(self.statistics_agree(*pair) for pair in zip(*outputs, strict=True)),
            )
        return self._agreements[key]

    def _output_records(self, side: int, item: Item) -> list[TensorRecord]:
        tree = self.trees[side]
        if len(item.calls) == 1:
            return list(tensor_records(tree.node(item.calls[0]).outputs))
        return [concatenated_statistics([single_output(tree, index) for index in item.calls])]

    def statistics_agree(self, reference: TensorRecord, candidate: TensorRecord) -> bool:
        if reference.shape != candidate.shape and not flattened(reference.shape, candidate.shape):
            # one broadcasts to the other (position ids [1, 8] against [2, 8]): the statistics of an
            # expanded tensor are not those of the tensor, its values tell
            broadcast = self.comparer.mode == "tensors" and form_of(reference, candidate) is Form.BROADCAST
            return broadcast and self.comparer.agree(reference, candidate, Form.BROADCAST)
        diff = GroupDiff()
        self.statistics_comparer.compare(reference, candidate, diff)
        return diff.match

    def same_input(self, side: int, first: int, other: int) -> bool:
        """Whether two calls of one side got the same first input (as the parts of one projection do)."""
        tree = self.trees[side]
        given = [first_tensor(tree.node(index).inputs) for index in (first, other)]
        return None not in given and given[0].shape == given[1].shape and self.statistics_agree(*given)

    def outputs_agree(self, reference: int, candidate: int) -> bool:
        """Whether two leaves' single outputs have the same statistics (whatever their layout)."""
        outputs = [single_output(self.trees[0], reference), single_output(self.trees[1], candidate)]
        if None in outputs or math.prod(outputs[0].shape) != math.prod(outputs[1].shape):
            return False
        diff = GroupDiff()
        self.statistics_comparer.compare(*outputs, diff)
        return diff.match

    def values_agree(self, reference: int, candidate: int) -> bool:
        """Whether two leaf calls of the same shapes got the same first input and made the same outputs."""
        if (reference, candidate) not in self._values:
            self._values[reference, candidate] = self._values_agree(reference, candidate)
        return self._values[reference, candidate]

    def _values_agree(self, reference: int, candidate: int) -> bool:
        pairs = [
            (
                first_tensor(self.trees[0].node(reference).inputs),
                first_tensor(self.trees[1].node(candidate).inputs),
            ),
            (single_output(self.trees[0], reference), single_output(self.trees[1], candidate)),
        ]
        diff = GroupDiff()
        for expected, actual in pairs:
            if expected is None or actual is None:
                return False
            self.comparer.compare(expected, actual, diff)
        return diff.match

    def is_identity(self, tree: CallTree, index: int) -> bool:
        node = tree.node(index)
        given, output = first_tensor(node.inputs), single_output(tree, index)
        if given is None or output is None or (given.shape, given.dtype) != (output.shape, output.dtype):
            return False
        if node.exception:
            return False
        for comparer in (self.statistics_comparer, self.comparer):
            diff = GroupDiff()
            comparer.compare(given, output, diff)
            if not diff.match:
                return False
        return True
