"""The model addition debugger: a nested trace of every module call of a forward pass."""

from model_debugging.debugger.context import model_addition_debugger_context
from model_debugging.debugger.writer import TracePaths, trace_paths

__all__ = ["TracePaths", "model_addition_debugger_context", "trace_paths"]
