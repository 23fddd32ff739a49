"""Decide the skips a common test takes at run time, from the library's sources read statically.

``evaluate_test`` runs the common test's definition (an ``ast`` function) on symbolic values: the
test class's flags, its tester's values, the library's model and config classes. A ``self.skipTest``
it reaches is a skip; a condition it cannot evaluate on the way to one makes the test undecided.
"""

from model_debugging.skips.runtime.context import TestClassFacts
from model_debugging.skips.runtime.statements import RuntimeVerdict, evaluate_test

__all__ = ["RuntimeVerdict", "TestClassFacts", "evaluate_test"]
