"""Hand-written traces for the trace reader's tests."""

from tests.support.traces import toy_trace, trace_writer

__all__ = ["toy_trace", "trace_writer"]  # fixtures
