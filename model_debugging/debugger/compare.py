"""Deprecated: moved to ``model_debugging.compare.engine``; this path keeps working, with a warning, for one release."""

from model_debugging._moved import moved_module

__getattr__ = moved_module(__name__, "model_debugging.compare.engine")
