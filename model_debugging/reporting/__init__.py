"""The shared reporting layer: atomic writes and table rendering used by every tool."""

from model_debugging.reporting.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text
from model_debugging.reporting.tables import render_markdown_table, render_terminal_table

__all__ = [
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "render_markdown_table",
    "render_terminal_table",
]
