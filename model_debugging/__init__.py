"""model-debugging: trace, compare and test-audit models in transformers-style libraries.

Names that need torch are imported lazily, so scanner-only users never import torch.
"""

from model_debugging._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "model_addition_debugger_context": "model_debugging.debugger",
    "compare_traces": "model_debugging.compare.engine",
    "replay": "model_debugging.replay.api",
    "debug_port": "model_debugging.porting.api",
}
__all__ = ["__version__", *_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
