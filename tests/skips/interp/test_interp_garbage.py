"""What running a test leaves for Python's cyclic collector, which walks it after every model."""

import gc

from model_debugging.skips.decide import per_model
from model_debugging.skips.interp.outcome import Exit
from tests.skips.interp.conftest import scan_alpha

COMMON = """
import unittest


class ModelTesterMixin:
    def says_skip(self):
        return True

    def test_helper_returns(self):
        if self.says_skip():
            self.skipTest("the helper says so")
"""


def test_a_helpers_return_leaves_no_cycle(make_repo, scan, monkeypatch):
    """A helper's ``return`` ends its body by an exception the call keeps: kept with its traceback,
    it held the call's frame, which held it, a cycle only the collector frees."""
    cycles: list[Exit] = []

    def set_aside_survivors():
        gc.set_debug(gc.DEBUG_SAVEALL)  # the unreachable objects are kept in gc.garbage to be looked at
        try:
            gc.collect(1)
            cycles.extend(found for found in gc.garbage if isinstance(found, Exit))
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
        gc.freeze()

    monkeypatch.setattr(per_model, "_set_aside_survivors", set_aside_survivors)
    results = scan_alpha(make_repo, scan, COMMON)
    assert results["test_helper_returns"]["reasons_skipped"] == ["alpha: the helper says so"]
    assert cycles == []
