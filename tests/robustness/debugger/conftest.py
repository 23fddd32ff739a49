"""Traces of a leaf that outputs a chosen value, for the verdict properties."""

from tests.support.traces import trace_emitting

__all__ = ["trace_emitting"]  # fixtures
