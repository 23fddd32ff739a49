"""Where the explorer gets its traces: the one place it reads trace files."""

from __future__ import annotations

import os

from model_debugging.debugger.trace_format.reading import read_trace
from model_debugging.debugger.trace_format.records import Trace


def read_view_trace(path: str | os.PathLike) -> Trace:
    """The trace at ``path`` (a debugger output directory or one of its JSON files).

    Raises:
        TraceError: the path holds no trace, several traces, or a file that is not a debugger trace.
    """
    return read_trace(path)
