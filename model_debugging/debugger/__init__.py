"""The model addition debugger: a nested trace of every module call of a forward pass.

Names are imported on first use, so reading a trace through :mod:`.trace_format` never imports torch.
"""

from model_debugging._lazy import lazy_exports

_EXPORTS = {
    "model_addition_debugger_context": ".context",
    "TracePaths": ".trace_format.names",
    "trace_paths": ".trace_format.names",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
