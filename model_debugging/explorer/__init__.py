"""The trace explorer: one self-contained HTML page to look at a trace, or at where two traces diverge.

Example::

    from model_debugging.explorer import write_view

    write_view("debug_output/")                                  # debug_output/trace.html
    write_view("reference/", "diff.html", compare="port/")       # diverged calls coloured
"""

from model_debugging._lazy import lazy_exports

_EXPORTS = {"view_document": ".view", "write_view": ".view", "render_page": ".page"}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
