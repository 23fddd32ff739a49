"""The pull-request check: scan the base revision and the working tree, list the skips the change introduces.

The names are imported lazily: posting the check's comment (``comment.py``) needs no pandas.
"""

from model_debugging._lazy import lazy_exports

__all__ = ["find_introduced_skips"]
__getattr__, __dir__ = lazy_exports(__name__, {"find_introduced_skips": ".introduced"})
