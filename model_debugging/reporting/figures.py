"""Matplotlib plumbing shared by every plot: a headless import and an atomic save."""

from __future__ import annotations

import importlib.util
import io
import os
from pathlib import Path

from model_debugging.reporting.atomic import atomic_write_bytes

PLOT_EXTRA = "install the 'plot' extra, e.g. pip install 'model-debugging[plot]'"


def _plot_format(path: str | os.PathLike) -> str:
    return Path(path).suffix.lstrip(".").lower() or "png"


def plot_option_problem(option: str, path: str | os.PathLike | None) -> str | None:
    """Why ``option`` (a plot to write to ``path``) cannot be honoured, checked before any work; None when it can.

    matplotlib (an optional extra) is imported only when a plot is asked for.
    """
    if not path:
        return None
    if importlib.util.find_spec("matplotlib") is None:
        return f"{option} needs matplotlib: {PLOT_EXTRA}"
    from matplotlib.backend_bases import FigureCanvasBase  # the extra is installed: its formats

    formats = FigureCanvasBase.get_supported_filetypes()
    if _plot_format(path) not in formats:
        return (
            f"{option} {path}: matplotlib cannot write .{_plot_format(path)} files "
            f"(the file name's extension picks the format: {', '.join(sorted(formats))})"
        )
    return None


def import_pyplot():
    """Return ``matplotlib.pyplot`` on the headless Agg backend, or explain how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(f"plots need matplotlib: {PLOT_EXTRA}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: str | os.PathLike) -> Path:
    """Render ``figure`` to ``path`` (format from the suffix, PNG by default) atomically, then close it."""
    target = Path(path)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=_plot_format(target), bbox_inches="tight")
    import_pyplot().close(figure)
    return atomic_write_bytes(target, buffer.getvalue())
