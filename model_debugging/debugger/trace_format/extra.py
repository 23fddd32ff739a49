"""``<Class>_debug_tree_EXTRA.json``: what this debugger records beyond upstream's files.

The ``_SUMMARY.json`` and ``_FULL_TENSORS.json`` files hold exactly what upstream's debugger
writes. Everything else goes here, beside them, as one JSON object::

    {"format": "model-debugging trace extras", "version": 2,
     "trace_files": {"FULL_TENSORS": "<sha256 of that file>", "SUMMARY": "<sha256>"},
     "tree": {"module_path": "LlamaForCausalLM", "module_class": "transformers....LlamaForCausalLM",
              "tensors": [{"statistics": {...}}, ...], "children": [...]}}

``tree`` mirrors the call tree node for node (same ``module_path``, same order) and adds, per node:

- ``module_class`` (a module call's class), ``exception`` (``{"type", "message"}`` of the call
  that raised, and ``forward_pre_hook_of``: the module it called whose forward pre-hook raised
  it), ``inputs_modified`` (the paths of the input tensors the call changed in place,
  ``["args.0"]``, when it changed any; version 1 files did not check);
- ``tensors``: one object per tensor entry of the node's ``inputs`` then ``outputs``, in the
  order :func:`.entries.value_leaves` finds them, with the tensor's ``statistics``, when
  its data is not in the file the trace JSON names, the ``file`` that holds it (a module called
  twice: upstream names both calls' files alike), and under torch.distributed its ``placement``
  (``{"placements": ["Shard(dim=2)"], "source": ..., "local_shapes": [...]}``, see
  :class:`.records.Placement`);
- function records (``record_functions``) as nodes of their own among the children, with
  ``function`` (the qualified name) and their ``inputs`` and ``outputs`` in full: upstream's files
  do not have them.

A trace recorded under torch.distributed with ``ranks="all"`` or ``"gathered"`` also has
``"distributed": {"ranks": "gathered", "rank": 0, "world_size": 2}`` at the top.

The checksums tie the file to the trace files it was written with: readers refuse a trace whose
JSON was replaced since (e.g. by upstream's debugger writing into the same directory).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from model_debugging.debugger.trace_format.entries import tensor_entries
from model_debugging.debugger.trace_format.json_input import load_json, shown
from model_debugging.debugger.trace_format.names import (
    DISTRIBUTED_KEY,
    EXCEPTION_KEY,
    FULL_TENSORS_SUFFIX,
    FUNCTION_KEY,
    INPUTS_MODIFIED_KEY,
    MODULE_CLASS_KEY,
    PLACEMENT_KEY,
    STATISTICS_KEY,
    SUMMARY_SUFFIX,
)
from model_debugging.debugger.trace_format.records import TensorEntry, TraceError

EXTRA_FORMAT = "model-debugging trace extras"
EXTRA_VERSION = 2
READ_VERSIONS = (1, 2)
INPUTS_MODIFIED_SINCE = 2  # version 1 did not check which inputs a call changed in place
# the keys of the document's "trace_files": which trace JSON each checksum is of
TRACE_FILE_KINDS = {"FULL_TENSORS": FULL_TENSORS_SUFFIX, "SUMMARY": SUMMARY_SUFFIX}
_UPSTREAM_NODE_KEYS = ("module_path", "inputs", "outputs")
_OUR_NODE_KEYS = (MODULE_CLASS_KEY, FUNCTION_KEY, EXCEPTION_KEY, INPUTS_MODIFIED_KEY)
# the key of a tensor's item naming the file that holds its data
FILE_KEY = "file"


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_trace(tree: dict, real_files: dict[int, str]) -> tuple[dict, dict]:
    """Upstream's tree and the extra file's tree of ``tree`` (a node as ``CallRecord.to_json`` gives it).

    ``real_files`` maps ``id(entry)`` of tensor entries whose data is in another file than their
    ``value`` names to that file (``./name.safetensors``).
    """
    upstream = {key: tree[key] for key in _UPSTREAM_NODE_KEYS if key in tree}
    extra = {"module_path": tree["module_path"]}
    extra.update((key, tree[key]) for key in _OUR_NODE_KEYS if key in tree)
    if FUNCTION_KEY in tree:
        extra.update((key, tree[key]) for key in ("inputs", "outputs") if key in tree)
    items = [_tensor_item(entry, real_files) for entry in tensor_entries(tree["inputs"], tree.get("outputs"))]
    if any(items):
        extra["tensors"] = items
    children = tree.get("children", ())
    if children:
        upstream_children = []
        extra["children"] = []
        for child in children:
            upstream_child, extra_child = split_trace(child, real_files)
            if FUNCTION_KEY not in child:
                upstream_children.append(upstream_child)
            extra["children"].append(extra_child)
        if upstream_children:
            upstream["children"] = upstream_children
    return upstream, extra


def _tensor_item(entry: dict, real_files: dict[int, str]) -> dict:
    item = {}
    if isinstance(entry, TensorEntry) and entry.statistics is not None:
        item[STATISTICS_KEY] = entry.statistics
    if id(entry) in real_files:
        item[FILE_KEY] = real_files[id(entry)]
    if isinstance(entry, TensorEntry) and entry.placement is not None:
        item[PLACEMENT_KEY] = entry.placement
    return item


def extra_text(tree: dict, full_tensors: bytes, summary: bytes, distributed: dict | None = None) -> str:
    """The extra file of a trace whose JSON files are ``full_tensors`` and ``summary``."""
    document = {
        "format": EXTRA_FORMAT,
        "version": EXTRA_VERSION,
        "trace_files": {"FULL_TENSORS": checksum(full_tensors), "SUMMARY": checksum(summary)},
        "tree": tree,
    }
    if distributed is not None:
        document[DISTRIBUTED_KEY] = distributed
    return json.dumps(document, separators=(",", ":"))


def read_extra(path: Path, trace_file: Path, trace_data: bytes) -> dict | None:
    """The extra file ``path`` (None when there is none), checked against ``trace_file``; its
    ``tree`` is an object (its ``distributed`` is checked by the reader).

    Raises:
        TraceError: the file is unreadable, not an extra file, of a newer version, or was written
            with other trace files than ``trace_file`` (whose bytes are ``trace_data``).
    """
    if not path.exists():
        return None
    document, _ = load_json(path, root="tree")
    if not isinstance(document, dict) or document.get("format") != EXTRA_FORMAT:
        raise TraceError(path, f'not a model-debugging extra file (no "format": {EXTRA_FORMAT!r})')
    version = document.get("version")
    if version not in READ_VERSIONS:
        raise TraceError(
            path,
            f"format version {shown(version)}; this model-debugging reads versions up to {EXTRA_VERSION}",
        )
    kind = next(kind for kind, suffix in TRACE_FILE_KINDS.items() if trace_file.name.endswith(suffix))
    recorded = document.get("trace_files")
    if not isinstance(recorded, dict) or recorded.get(kind) != checksum(trace_data):
        raise TraceError(
            path,
            f"was written with another {trace_file.name} than the one beside it (its checksum differs): "
            "the trace JSON was replaced since; trace the model again, or remove this file to read the "
            "trace without what it adds",
        )
    tree = document.get("tree")
    if not isinstance(tree, dict):
        raise TraceError(path, f"'tree' is a {type(tree).__name__}, expected an object")
    return document
