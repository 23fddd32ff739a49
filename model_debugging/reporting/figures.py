"""Matplotlib plumbing shared by every plot: a headless import and an atomic save."""

from __future__ import annotations

import io
import os
from pathlib import Path

from model_debugging.reporting.atomic import atomic_write_bytes


def import_pyplot():
    """Return ``matplotlib.pyplot`` on the headless Agg backend, or explain how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "plots need matplotlib: install the 'plot' extra, e.g. pip install 'model-debugging[plot]'"
        ) from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: str | os.PathLike) -> Path:
    """Render ``figure`` to ``path`` (format from the suffix, PNG by default) atomically, then close it."""
    target = Path(path)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=target.suffix.lstrip(".") or "png", bbox_inches="tight")
    import_pyplot().close(figure)
    return atomic_write_bytes(target, buffer.getvalue())
