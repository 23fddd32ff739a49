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
"""
