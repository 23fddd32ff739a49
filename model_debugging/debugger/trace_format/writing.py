"""Writing a finished trace: ``<Class>_debug_tree_FULL_TENSORS.json`` and ``..._SUMMARY.json``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from model_debugging.debugger.trace_format.json_text import dumps_indented
from model_debugging.debugger.trace_format.names import TracePaths, trace_paths
from model_debugging.debugger.trace_format.records import TensorEntry
from model_debugging.reporting.atomic import atomic_write_text

logger = logging.getLogger(__name__)


def without_values(value: Any) -> Any:
    """A copy of a trace (sub)tree whose tensor entries have no ``value``."""
    if isinstance(value, TensorEntry):
        return {key: item for key, item in value.items() if key != "value"}
    if isinstance(value, dict):
        return {key: without_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_values(item) for item in value]
    return value


class TraceWriter:
    """Writes the traces of one context, numbering the later top-level forwards."""

    def __init__(self, output_dir: Path, class_name: str):
        self._output_dir = output_dir
        self._class_name = class_name
        self._written = 0

    def write(self, tree: dict) -> TracePaths:
        self._written += 1
        paths = trace_paths(self._output_dir, self._class_name, self._written)
        logger.info("Writing model trace to %s and %s", paths.full_tensors, paths.summary)
        # the text upstream's json.dump(tree, f, indent=2) writes, built faster; written atomically
        _write_trace_file(paths.full_tensors, dumps_indented(tree))
        _write_trace_file(paths.summary, dumps_indented(without_values(tree)))
        return paths


def _write_trace_file(path: Path, text: str) -> None:
    try:
        atomic_write_text(path, text)
    except OSError as error:  # a failed write(2) names no file: say which trace could not be written
        raise OSError(
            error.errno, f"{error.strerror or error}; could not write the trace", str(path)
        ) from error
