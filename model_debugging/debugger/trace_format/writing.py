"""Writing a finished trace: ``<Class>_debug_tree_FULL_TENSORS.json``, ``..._SUMMARY.json`` and ``..._EXTRA.json``."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

from model_debugging.debugger.trace_format.entries import tensor_entries
from model_debugging.debugger.trace_format.extra import extra_text, split_trace
from model_debugging.debugger.trace_format.json_text import dumps_trace_texts
from model_debugging.debugger.trace_format.names import (
    EXTRA_SUFFIX,
    FULL_TENSORS_SUFFIX,
    FUNCTION_KEY,
    INCOMPLETE_SUFFIX,
    SAFETENSORS_SUFFIX,
    SUMMARY_SUFFIX,
    TracePaths,
    safe_file_stem,
    trace_paths,
)
from model_debugging.debugger.trace_format.records import TensorEntry
from model_debugging.reporting.atomic import atomic_write_with

logger = logging.getLogger(__name__)


class TraceWriter:
    """Writes the traces of one context, numbering the later top-level forwards.

    A trace is begun (its incomplete-trace marker written, before any tensor file), then written
    (both JSON files, then the marker removed) or abandoned (every file it wrote removed). Safe
    to use from several threads: each trace gets its own number.
    """

    def __init__(self, output_dir: Path, class_name: str, distributed: dict | None = None):
        self._output_dir = output_dir
        self._class_name = class_name
        self._distributed = distributed  # the extra file's "distributed" (see extra.py)
        self._numbers_taken = 0
        self._lock = threading.Lock()

    def begin(self) -> TracePaths:
        """Reserve the next trace's file names and mark it incomplete until it is written."""
        with self._lock:
            self._numbers_taken += 1
            paths = trace_paths(self._output_dir, self._class_name, self._numbers_taken)
        paths.incomplete_marker.write_text(_MARKER_TEXT, encoding="utf-8")  # its content does not matter
        return paths

    def write(self, paths: TracePaths, tree: dict, tensor_files: list[Path]) -> None:
        """Write the trace of ``tree`` (as ``CallRecord.to_json`` gives it): the extra file, then both JSON files.

        First the ``tensor_files`` the tree does not name are removed (a layer block recorded at
        once because it looked like the last of its run is dropped when a later call of the run
        replaces it: its files go with it), and the files of tensors upstream names alike are
        arranged as upstream's are (see :func:`_share_file_names`).
        """
        real_files: dict[int, str] = {}  # no tensor files (use_repr=True): none to remove or rename
        if tensor_files:
            named = _named_tensor_files(tree, set())
            for path in tensor_files:
                if path.name not in named:
                    path.unlink(missing_ok=True)
            real_files = _share_file_names(self._output_dir, tree)
        upstream_tree, extra_tree = split_trace(tree, real_files)
        logger.info("Writing model trace to %s and %s", paths.full_tensors, paths.summary)
        # the text upstream's json.dump(tree, f, indent=2) writes, built faster; written atomically
        full_text, summary_text = dumps_trace_texts(upstream_tree)
        full_data, summary_data = full_text.encode("ascii"), summary_text.encode("ascii")
        _write_trace_file(
            paths.extra, extra_text(extra_tree, full_data, summary_data, self._distributed).encode("ascii")
        )
        _write_trace_file(paths.full_tensors, full_data)
        _write_trace_file(paths.summary, summary_data)
        paths.incomplete_marker.unlink(missing_ok=True)

    def abandon(self, paths: TracePaths, tensor_files: list[Path]) -> None:
        """Remove what a trace that could not be finished wrote, its marker last."""
        for path in (*tensor_files, paths.extra, paths.full_tensors, paths.summary, paths.incomplete_marker):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        with self._lock:
            if trace_paths(self._output_dir, self._class_name, self._numbers_taken) == paths:
                self._numbers_taken -= 1  # the next trace takes its number


def _named_tensor_files(value: Any, names: set[str]) -> set[str]:
    """Add the names of the tensor files ``value`` (a trace subtree) refers to to ``names``."""
    if isinstance(value, TensorEntry):
        if value.file_stem is not None:
            names.add(value["value"].removeprefix("./"))
    elif isinstance(value, dict):
        for item in value.values():
            _named_tensor_files(item, names)
    elif isinstance(value, list):
        for item in value:
            _named_tensor_files(item, names)
    return names


def _upstream_file_entries(node: dict, entries: list[TensorEntry]) -> list[TensorEntry]:
    """Add the tensor entries with a file of ``node``'s subtree (function records left out) to ``entries``, in call order."""
    for entry in tensor_entries(node["inputs"], node.get("outputs")):
        if isinstance(entry, TensorEntry) and entry.file_stem is not None:
            entries.append(entry)
    for child in node.get("children", ()):
        if FUNCTION_KEY not in child:
            _upstream_file_entries(child, entries)
    return entries


def _share_file_names(directory: Path, tree: dict) -> dict[int, str]:
    """Name the files of tensors upstream names alike as upstream does; return where their data really is.

    Upstream names a tensor's file after the module path alone, so a module called twice writes
    its second call's tensors over the first's: its JSON names one file for both calls, holding the
    last call's tensor. Here each call's tensor got a file of its own (``X``, ``X__2``, ...); the
    JSON names the first call's name for all of them, and that file is swapped with the last call's
    so it holds what upstream's holds. Returns ``{id(entry): "./<file holding its data>"}`` for the
    entries whose data is not in the file the JSON names (for the extra file).
    """
    groups: dict[str, list[TensorEntry]] = {}
    for entry in _upstream_file_entries(tree, []):
        groups.setdefault(entry.file_stem, []).append(entry)
    real_files: dict[int, str] = {}
    for entries in groups.values():
        if len(entries) < 2:
            continue
        first, last = entries[0], entries[-1]
        shared, last_name = first["value"], last["value"]
        _swap_files(directory / shared.removeprefix("./"), directory / last_name.removeprefix("./"))
        for entry in entries[1:-1]:
            real_files[id(entry)] = entry["value"]
            entry["value"] = shared
        real_files[id(first)] = last_name
        last["value"] = shared
    return real_files


def _swap_files(first: Path, second: Path) -> None:
    temporary = first.with_name(f".{first.name}.{os.getpid()}.swap")
    os.rename(first, temporary)
    os.rename(second, first)
    os.rename(temporary, second)


_MARKER_TEXT = (
    "A model addition debugger trace is being written here. If this file is still present, the run "
    "was interrupted and the trace beside it is incomplete.\n"
)


def _is_trace_file(name: str, stem: str) -> bool:
    """Whether the debugger would write ``name`` for a model class whose safe name is ``stem``."""
    if name.startswith(f"{stem}_debug_tree"):
        return name.endswith((SUMMARY_SUFFIX, FULL_TENSORS_SUFFIX, EXTRA_SUFFIX, INCOMPLETE_SUFFIX))
    # tensor files: "<stem>_inputs...", "<stem>_outputs...", "<stem>.<module path>_inputs..." (not a
    # user's "<stem>.safetensors" weights)
    return (
        name.startswith((f"{stem}.", f"{stem}_"))
        and name.endswith(SAFETENSORS_SUFFIX)
        and ("_inputs" in name or "_outputs" in name)
    )


def move_aside_older_trace(output_dir: Path, class_name: str) -> Path | None:
    """Move the files of an earlier trace of ``class_name`` in ``output_dir`` into a new subdirectory.

    A new trace then never mixes with an older one (an interrupted run would otherwise leave the old
    JSON beside new tensor files). Returns the subdirectory, or None when there was nothing to move.
    """
    stem = safe_file_stem(class_name)
    older = [path for path in output_dir.iterdir() if path.is_file() and _is_trace_file(path.name, stem)]
    if not older:
        return None
    number = 1
    while (output_dir / f"{stem}_previous_trace_{number}").exists():
        number += 1
    destination = output_dir / f"{stem}_previous_trace_{number}"
    destination.mkdir()
    for path in older:
        path.rename(destination / path.name)
    return destination


def _write_trace_file(path: Path, data: bytes) -> None:
    try:
        # no fsync (as upstream): the file appears complete under its name or not at all, and the
        # traced forward does not wait for the disk
        atomic_write_with(path, lambda temporary: temporary.write_bytes(data), durable=False)
    except OSError as error:  # a failed write(2) names no file: say which trace could not be written
        raise OSError(
            error.errno, f"{error.strerror or error}; could not write the trace", str(path)
        ) from error
