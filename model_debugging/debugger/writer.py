"""Deprecated: moved to ``model_debugging.debugger.trace_format.writing``; this path keeps working, with a warning, for one release."""

from model_debugging._moved import moved_module

__getattr__ = moved_module(__name__, "model_debugging.debugger.trace_format.writing")
