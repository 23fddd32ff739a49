"""`model_addition_debugger_context` under the module path transformers uses.

Code written as ``from transformers.model_debugging_utils import model_addition_debugger_context``
runs on this package with only the package prefix changed; the same object is importable from
:mod:`model_debugging` (see docs/debugger.md). transformers' private helpers of that module are
not part of this path.
"""

from model_debugging.debugger.context import model_addition_debugger_context

__all__ = ["model_addition_debugger_context"]
