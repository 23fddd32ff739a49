"""model-debugging: trace, compare and test-audit models in transformers-style libraries.

Names that need torch are imported lazily, so scanner-only users never import torch.
"""

from importlib import import_module

__version__ = "0.1.0"

# public name -> module that defines it (imported on first access)
_LAZY_EXPORTS = {
    "model_addition_debugger_context": "model_debugging.debugger",
    "compare_traces": "model_debugging.debugger.compare",
}

__all__ = ["__version__", *_LAZY_EXPORTS]


def __getattr__(name: str):
    module_name = _LAZY_EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'model_debugging' has no attribute {name!r}")
    value = getattr(import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
