"""The shared reporting layer: atomic writes, tables, CSV and figures for every tool.

Names are imported on first use, so ``from model_debugging.reporting import atomic_write_json``
costs no pandas or matplotlib import (a warm scan is faster than importing pandas).
"""

from model_debugging._lazy import lazy_exports

_EXPORTS = {
    "atomic_write_bytes": ".atomic",
    "atomic_write_json": ".atomic",
    "atomic_write_text": ".atomic",
    "ItemsSection": ".report",
    "Report": ".report",
    "Section": ".report",
    "render_markdown": ".report",
    "render_text": ".report",
    "render_csv": ".csv_output",
    "write_csv": ".csv_output",
    "render_markdown_table": ".tables",
    "render_terminal_table": ".tables",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
