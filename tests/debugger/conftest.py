"""Fixtures of the debugger's tests: hand-written traces, and torch on two intra-op threads."""

import pytest
import torch

from tests.support.traces import toy_trace, trace_writer

__all__ = ["toy_trace", "trace_writer"]  # fixtures


@pytest.fixture
def two_threads():
    """The traced code's torch on 2 intra-op threads (a sum may then add in another order), restored after."""
    saved = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(saved)
