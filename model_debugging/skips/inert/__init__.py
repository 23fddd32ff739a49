"""Inert tests: pairs the analyzer says ran whose test can pass without checking anything.

:func:`find_static_inert` answers from the sources, with the analyzer's evaluator; our pytest
plugin (:mod:`model_debugging.pytest_plugin`) answers from a run, counting the assertions reached.
"""

from model_debugging.skips.inert.find import find_static_inert

__all__ = ["find_static_inert"]
