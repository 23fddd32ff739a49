"""Bar chart of the skipped proportion per common test (needs the ``plot`` extra)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from model_debugging.reporting.figures import import_pyplot, save_figure


def plot_skipped_proportion(results: pd.DataFrame, path: str | os.PathLike, *, top: int = 30) -> Path:
    """Save a horizontal bar chart of the ``top`` most skipped tests of ``results``.

    Args:
        results (`pandas.DataFrame`): a frame from :func:`load_scan_results`.
        path (`str` or `os.PathLike`): where to write the image; the suffix picks the format.
        top (`int`, *optional*, defaults to 30): how many tests to show, most skipped first.

    Returns:
        `Path`: the written file.
    """
    plt = import_pyplot()
    shown = results.sort_values("skipped_proportion", ascending=False, kind="stable").head(top)
    shown = shown.iloc[::-1]  # barh draws bottom-up; keep the most skipped test on top
    figure, axes = plt.subplots(figsize=(8, 1.5 + 0.3 * max(len(shown), 1)))
    axes.barh([str(name) for name in shown.index], shown["skipped_proportion"], color="tab:orange")
    axes.set_xlim(0, 1.08)  # room for the "100%" label
    ticks = [0, 0.25, 0.5, 0.75, 1]
    axes.set_xticks(ticks, labels=[f"{tick:.0%}" for tick in ticks])
    axes.set_xlabel("share of models that skip the test")
    axes.set_title(f"Most skipped common tests (top {len(shown)} of {len(results)})")
    for y, value in enumerate(shown["skipped_proportion"]):
        axes.text(value + 0.01, y, f"{value:.0%}", va="center", fontsize=8)
    return save_figure(figure, path)
