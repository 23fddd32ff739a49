"""The one owner of the debugger's trace files: their names, records, writing and reading.

A trace is ``<Class>_debug_tree_FULL_TENSORS.json`` (every module call, tensors as repr lines or
as ``./<name>.safetensors`` paths), ``<Class>_debug_tree_SUMMARY.json`` (the same without the
``value`` of each tensor) and, with ``use_repr=False``, one ``.safetensors`` file per tensor:
exactly the files upstream's debugger writes. What this debugger records beyond them (module
classes, float64 statistics, function records, exceptions) is in ``<Class>_debug_tree_EXTRA.json``.
The debugger writes traces and every tool reads them only through this package:

- :mod:`.names`: file names, ``STAT_NAMES``, the tensor file key;
- :mod:`.records`: the record types (``TensorEntry`` as written; ``Trace``, ``TraceNode``,
  ``TensorRecord`` as read) and ``TraceError``;
- :mod:`.writing` and :mod:`.json_text`: the JSON files, byte for byte as upstream writes them;
- :mod:`.extra`: the extra file, split from the recorded tree and read back;
- :mod:`.tensor_files`: one tensor file, written and read (the only module that needs torch);
- :mod:`.json_input`, :mod:`.entries`, :mod:`.nodes`: the JSON read strictly, node by node;
- :mod:`.reading` and :mod:`.frame`: a trace back as records or as a pandas DataFrame.

Names are imported on first use, so reading a trace never imports torch.
"""

from model_debugging._lazy import lazy_exports

_EXPORTS_BY_MODULE = {
    ".names": (
        "FULL_TENSORS_SUFFIX",
        "STAT_NAMES",
        "SUMMARY_SUFFIX",
        "TENSOR_KEY",
        "FileNameRegistry",
        "TracePaths",
        "trace_paths",
    ),
    ".records": ("TensorEntry", "TensorRecord", "Trace", "TraceError", "TraceMode", "TraceNode"),
    ".writing": ("TraceWriter",),
    ".tensor_files": ("read_tensor_file", "write_tensor_file"),
    ".entries": ("parse_shape", "parse_stat"),
    ".reading": ("find_traces", "read_trace", "resolve_trace_file", "trace_files"),
    ".frame": ("load_trace",),
}
_EXPORTS = {name: module for module, names in _EXPORTS_BY_MODULE.items() for name in names}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
