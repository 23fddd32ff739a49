"""The reference's own spread: how far two runs of the reference apart (bf16 vs fp32, eager vs SDPA) are.

Both traces are compared with :func:`~model_debugging.compare.compare_traces`; the spread of a
recorded call is the largest difference between its outputs in the two runs. It includes what
earlier calls passed on, so it is a generous yardstick: a replayed difference above it is not
rounding.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from model_debugging.compare.engine import compare_traces
from model_debugging.debugger.trace_format.records import TraceNode


@dataclass(frozen=True)
class NoiseLevels:
    """Largest output difference between two reference runs, per (module path, call index) of the first."""

    source: os.PathLike | str
    levels: dict[tuple[str, int], float]

    @classmethod
    def measure(cls, reference: str | os.PathLike, second_reference: str | os.PathLike) -> NoiseLevels:
        comparison = compare_traces(reference, second_reference)
        levels = {
            (row.module_path, row.call_index): row.max_abs_diff or 0.0
            for row in comparison.modules
            if row.compared == "outputs"
        }
        return cls(source=comparison.candidate, levels=levels)

    def level(self, node: TraceNode) -> float | None:
        """The spread of ``node``'s outputs; None when the second run has no such call."""
        return self.levels.get((node.module_path, node.call_index))
