"""Output capturing decorators and the class patch registry.

Public names are re-exported by `model_debugging.output_capturing` and `model_debugging.monkey_patching`.
"""
