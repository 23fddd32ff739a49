"""Compare tests read whole report lines: a wide terminal, unless a test sets its own width."""

import pytest

from tests.support.traces import toy_trace, toy_traces, trace_emitting, trace_writer

__all__ = ["toy_trace", "toy_traces", "trace_emitting", "trace_writer"]  # fixtures


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
