"""Pausing Python's cyclic garbage collector while the scan builds objects that live on.

Parsing, reading the library and unpickling records make millions of small objects that stay
alive; each full collection meanwhile walks all of them again and frees nothing (the trees and
records hold no cycles). Reading the library with the collector running spent more than a quarter
of that phase collecting.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block; the collector's previous state comes back after it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
