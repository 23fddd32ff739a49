"""What a long scan shows while it works: one entry per phase (parsing, the library, the evaluation).

On a terminal each phase is a tqdm bar with its count; elsewhere (a CI log) each phase prints one
line when it ends, with its count, its time and the CPU time it used in this process and the worker
processes it ended (more than its time when it worked in parallel, much less on a busy machine),
e.g. ``evaluating models: 241 models in 6.2 s (CPU 11.7 s)``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import TextIO


class Phase:
    """The count of one phase; the scan raises ``total`` as it learns the work and ``advance``s."""

    def __init__(self, bar=None):
        self.total = self.done = 0
        self.tallies: dict[str, int] = {}
        self._bar = bar

    def add(self, count: int) -> None:
        """``count`` more items to do."""
        self.total += count
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(count)

    def tally(self, what: str, count: int) -> None:
        """Count ``count`` more items that needed no work, shown in parentheses (``"412 from the cache"``)."""
        self.tallies[what] = self.tallies.get(what, 0) + count


class ScanProgress:
    """Shows the phases of a scan on ``stream`` (stderr by default): bars when it is a terminal
    (or ``interactive``), a line per phase otherwise."""

    def __init__(self, stream: TextIO | None = None, *, interactive: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive

    @contextlib.contextmanager
    def phase(self, name: str, unit: str) -> Iterator[Phase]:
        """A phase called ``name`` counting ``unit``s (a singular noun)."""
        start, start_cpu = time.perf_counter(), _cpu_seconds()
        bar = None
        if self.interactive:
            from tqdm import tqdm  # only on a terminal

            bar = tqdm(total=0, desc=name, unit=unit, file=self.stream, leave=True)
        phase = Phase(bar)
        try:
            yield phase
        finally:
            if bar is not None:
                bar.close()
        if bar is None:
            tallies = ", ".join(f"{count} {what}" for what, count in phase.tallies.items() if count)
            notes = f" ({tallies})" if tallies else ""
            units = unit if phase.done == 1 else f"{unit}s"
            seconds, cpu = time.perf_counter() - start, _cpu_seconds() - start_cpu
            print(
                f"{name}: {phase.done} {units}{notes} in {seconds:.1f} s (CPU {cpu:.1f} s)",
                file=self.stream,
                flush=True,
            )

    def line(self, text: str) -> None:
        """A line of its own (how a scan was answered without phases)."""
        print(text, file=self.stream, flush=True)


def _cpu_seconds() -> float:
    """User and system time of this process and of the child processes it has waited for (the
    children's are 0 on Windows)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def phase_of(progress: ScanProgress | None, name: str, unit: str) -> contextlib.AbstractContextManager[Phase]:
    """``progress.phase(name, unit)``, or a phase nobody sees when there is no ``progress``."""
    return contextlib.nullcontext(Phase()) if progress is None else progress.phase(name, unit)
