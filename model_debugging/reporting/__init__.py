"""The shared reporting layer: atomic writes and table rendering used by every tool."""

from model_debugging.reporting.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text
from model_debugging.reporting.csv_output import render_csv, write_csv
from model_debugging.reporting.scan_results import ScanResultsError, load_scan_results
from model_debugging.reporting.skip_plot import plot_skipped_proportion
from model_debugging.reporting.tables import render_markdown_table, render_terminal_table

__all__ = [
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "render_markdown_table",
    "render_terminal_table",
    "render_csv",
    "write_csv",
    "ScanResultsError",
    "load_scan_results",
    "plot_skipped_proportion",
]
