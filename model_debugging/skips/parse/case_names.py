"""The names ``parameterized.expand`` gives the methods it adds to a class: ``<test>_<index>``, the
index zero-padded to the width of the last one, plus ``_<first argument>`` when the parameter's first
argument is a string (every run of characters outside ``[a-zA-Z0-9_]`` replaced by ``_``).

Apart from :mod:`.expansion`, which reads the decorator with libcst, so that the evaluator can name
the cases of a common test without importing libcst (a rescan that evaluates no model needs none).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^a-zA-Z0-9_]+")


def case_name(test: str, number: int, count: int, first: object) -> str:
    """The name of case ``number`` of ``count``, whose first argument is ``first``."""
    suffix = f"_{_UNSAFE.sub('_', first)}" if isinstance(first, str) else ""
    return f"{test}_{number:0>{len(str(count - 1))}}{suffix}"
