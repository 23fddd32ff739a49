"""A call the port forgot, for bisection's conclusion: compare's :func:`~model_debugging.compare.producers.find_producer`
on the comparison replay was given.

A port that never calls the reference's final norm sends the LM head the norm's input: replayed on
identical inputs, every recorded call is correct, and the model's own code differs before the LM
head. Compare's alignment knows the norm has no counterpart, and its recorded values tell that the
norm made what the LM head received: bisection names it first.
"""

from __future__ import annotations

from model_debugging.compare.align import TraceAlignment
from model_debugging.compare.numeric import PairComparer
from model_debugging.compare.producers import find_producer
from model_debugging.compare.result import TraceComparison


class ForgottenCalls:
    """Compare's producer finding on the rows of ``comparison`` (made on ``alignment``'s pairs), its
    values told apart by ``comparer`` (compare's tolerance)."""

    def __init__(self, alignment: TraceAlignment, comparison: TraceComparison, comparer: PairComparer):
        self._alignment = alignment
        self._rows = comparison.modules
        self._comparer = comparer

    def named(self, container: int, receiver: int) -> str | None:
        """What compare says of the reference call without a counterpart inside call ``container``
        that made what call ``receiver`` (the first whose inputs differ) received; None when none did
        or either call has no row of its own."""
        outer, first = self._row(container), self._row(receiver)
        if outer is None or first is None:
            return None
        producer = find_producer(self._alignment, self._rows, outer, first, self._comparer)
        return None if producer is None else producer.describe(self._alignment, self._rows[first].module_path)

    def _row(self, call: int) -> int | None:
        """The row of the pair whose one reference call is ``call`` (the comparison's rows are its pairs)."""
        path = self._alignment.reference.node(call).module_path
        for index, pair in enumerate(self._alignment.pairs):
            if pair.reference == (call,):
                row = self._rows[index] if index < len(self._rows) else None
                return index if row is not None and row.module_path == path else None
        return None
