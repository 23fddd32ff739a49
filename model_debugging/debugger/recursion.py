"""Room on the Python stack for the frames the debugger adds to a deeply nested model."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_headroom_users = 0
_limit_before: int | None = None


@contextmanager
def recursion_headroom(extra_frames: int) -> Iterator[None]:
    """Raise the recursion limit by ``extra_frames`` while any traced forward runs (any thread).

    The wrappers add a frame per module level and recording adds some more at the deepest call: a
    model nested just shallow enough to run without the debugger must not hit the limit with it.
    """
    global _headroom_users, _limit_before
    with _LOCK:
        if _headroom_users == 0:
            _limit_before = sys.getrecursionlimit()
            sys.setrecursionlimit(_limit_before + extra_frames)
        elif sys.getrecursionlimit() < _limit_before + extra_frames:
            sys.setrecursionlimit(_limit_before + extra_frames)
        _headroom_users += 1
    try:
        yield
    finally:
        with _LOCK:
            _headroom_users -= 1
            if _headroom_users == 0:
                sys.setrecursionlimit(_limit_before)
