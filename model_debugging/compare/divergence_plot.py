"""Plot a per-module difference along execution order, with the divergence point marked."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from model_debugging.reporting.figures import import_pyplot, save_figure


def plot_divergence(
    labels: Sequence[str],
    max_abs_diffs: Sequence[float | None],
    path: str | os.PathLike,
    *,
    marked: int | None = None,
    marked_label: str = "divergence",
    tolerance: float | None = None,
    title: str = "max |candidate - reference| along execution order",
) -> Path:
    """Save a log-scale line of ``max_abs_diffs`` (one per module call, in order) to ``path``.

    Exact zeros cannot sit on a log axis: they are drawn at a floor a decade below the smallest
    positive difference and the axis label says so. Missing values (None) leave a gap. ``marked``
    is the index of the call to mark (the divergence point), named in the legend as
    ``marked_label: <label>``; ``tolerance`` draws a horizontal reference line.
    """
    plt = import_pyplot()
    positive = [value for value in max_abs_diffs if value is not None and value > 0]
    floor = min(positive) / 10 if positive else 1e-12
    floor = min(floor, tolerance / 10) if tolerance else floor
    values = [float("nan") if value is None else max(value, floor) for value in max_abs_diffs]

    figure, axes = plt.subplots(figsize=(max(6.0, min(0.12 * len(values), 18.0)), 4.0))
    axes.plot(range(len(values)), values, marker=".", linewidth=1)
    axes.set_yscale("log")
    axes.set_xlabel("module call (execution order)")
    axes.set_ylabel(f"max abs diff (0 drawn at {floor:.0e})")
    axes.set_title(title)
    if tolerance:
        axes.axhline(tolerance, color="grey", linestyle=":", label=f"atol {tolerance:g}")
    if marked is not None:
        axes.axvline(marked, color="red", linestyle="--", label=f"{marked_label}: {labels[marked]}")
    if tolerance or marked is not None:
        axes.legend(loc="best", fontsize="small")
    return save_figure(figure, path)
