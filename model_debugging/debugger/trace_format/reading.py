"""Read a model addition debugger trace into plain records, without importing torch.

A trace is the pair ``<Class>_debug_tree_SUMMARY.json`` / ``<Class>_debug_tree_FULL_TENSORS.json``
(plus one ``.safetensors`` file per tensor when it was recorded with ``use_repr=False``), as
upstream's debugger writes them, and, when this debugger wrote it, ``<Class>_debug_tree_EXTRA.json``
(see :mod:`.extra`), whose module classes, statistics and function records are read into the same
records. Any value that is not what the format allows is a ``TraceError`` naming the file and node.

Example::

    trace = read_trace("debug_output/")          # a directory or either JSON file
    for node in trace.nodes:                      # execution order
        print(node.module_path, [entry.sub_path for entry in node.outputs])
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from model_debugging.debugger.trace_format.extra import INPUTS_MODIFIED_SINCE, read_extra
from model_debugging.debugger.trace_format.json_input import load_json, shown
from model_debugging.debugger.trace_format.names import (
    DISTRIBUTED_KEY,
    EXCEPTION_KEY,
    EXTRA_SUFFIX,
    FULL_TENSORS_SUFFIX,
    FUNCTION_KEY,
    INCOMPLETE_SUFFIX,
    MODULE_CLASS_KEY,
    SAFETENSORS_SUFFIX,
    SUMMARY_SUFFIX,
    trace_base,
)
from model_debugging.debugger.trace_format.nodes import (
    Malformed,
    check_extra_node,
    children_of,
    exception_text,
    expect,
    inputs_modified,
    optional_text,
    records,
)
from model_debugging.debugger.trace_format.records import DistributedRun, Trace, TraceError, TraceNode


def find_traces(directory: str | os.PathLike) -> list[Path]:
    """The trace JSON files in ``directory``, one per trace (FULL_TENSORS preferred over SUMMARY).

    A trace killed before its JSON files were written is listed by its incomplete-trace marker.
    """
    directory = Path(directory)
    bases: dict[str, Path] = {}
    for suffix in (INCOMPLETE_SUFFIX, SUMMARY_SUFFIX, FULL_TENSORS_SUFFIX):  # later suffixes win
        for path in directory.glob(f"*{suffix}"):
            bases[path.name[: -len(suffix)]] = path
    return [bases[base] for base in sorted(bases)]


def resolve_trace_file(path: str | os.PathLike) -> Path:
    """The JSON file to read for ``path``: a trace JSON itself, or the only trace in a directory.

    A ``_SUMMARY.json`` path is read from its ``_FULL_TENSORS.json`` sibling when that exists: it is
    the same trace with the tensor values (or their safetensors files) added.
    """
    path = Path(path)
    if path.is_dir():
        found = find_traces(path)
        if not found:
            raise TraceError(
                path, f"no '*{SUMMARY_SUFFIX}' or '*{FULL_TENSORS_SUFFIX}' trace in this directory"
            )
        if len(found) > 1:
            listing = ", ".join(file.name for file in found)
            raise TraceError(
                path, f"{len(found)} traces in this directory ({listing}); pass one of these files"
            )
        return found[0]
    if path.name.endswith(SUMMARY_SUFFIX):
        full = path.with_name(path.name[: -len(SUMMARY_SUFFIX)] + FULL_TENSORS_SUFFIX)
        if full.is_file():
            return full
    if not path.exists():
        raise TraceError(path, "no such file or directory")
    if not path.name.endswith((SUMMARY_SUFFIX, FULL_TENSORS_SUFFIX)):
        raise TraceError(
            path,
            f"not a trace: expected a directory or a '*{SUMMARY_SUFFIX}' / '*{FULL_TENSORS_SUFFIX}' file",
        )
    return path


def trace_files(path: str | os.PathLike) -> list[Path]:
    """The files that make up the trace(s) at ``path`` (a trace directory or one of its JSON files).

    Every file of its directory the debugger could have written: each trace's JSON files, extra
    file and marker (also when absent: writing one would change how the trace reads) and every
    ``.safetensors`` file, plus ``path`` itself. Commands refuse to write any of them.
    """
    path = Path(path)
    directory = path if path.is_dir() else path.parent
    files = [] if path.is_dir() else [path]
    bases = set() if path.is_dir() else {trace_base(path.name)}
    try:
        entries = list(directory.iterdir())
    except OSError:  # reading the trace will say what is wrong
        entries = []
    for entry in entries:
        if entry.name.endswith(SAFETENSORS_SUFFIX):
            files.append(entry)
        elif trace_base(entry.name) != entry.name:
            bases.add(trace_base(entry.name))
    suffixes = (SUMMARY_SUFFIX, FULL_TENSORS_SUFFIX, EXTRA_SUFFIX, INCOMPLETE_SUFFIX)
    files += [directory / f"{base}{suffix}" for base in sorted(bases) for suffix in suffixes]
    return files


def _refuse_incomplete(trace_file: Path) -> None:
    marker = trace_file.with_name(trace_base(trace_file.name) + INCOMPLETE_SUFFIX)
    if marker.exists():
        raise TraceError(
            trace_file,
            f"incomplete trace: the run that wrote it stopped before finishing (marker file {marker.name}); "
            "trace the model again",
        )


def _paired_children(node: dict | None, extra: dict | None) -> list[tuple[dict | None, dict | None]]:
    """Each child of ``node`` with its node in the extra file; function records are only there (None in the trace)."""
    children = [] if node is None else children_of(node)
    if extra is None:
        return [(child, None) for child in children]
    pairs, remaining = [], iter(children)
    for extra_child in children_of(extra, in_extra=True):
        if FUNCTION_KEY in extra_child:
            pairs.append((None, extra_child))
            continue
        child = next(remaining, None)
        if child is None or child["module_path"] != extra_child["module_path"]:
            found = "no call" if child is None else f"a call of {shown(child['module_path'])}"
            raise Malformed(
                f"records a call of {shown(extra_child['module_path'])} where the trace has {found}: "
                "it belongs to another trace",
                in_extra=True,
            )
        pairs.append((child, extra_child))
    left = next(remaining, None)
    if left is not None:
        raise Malformed(
            f"has no record of the call of {shown(left['module_path'])}: it belongs to another trace",
            in_extra=True,
        )
    return pairs


def _read_node(
    node: dict | None, extra: dict | None, directory: Path, checks_inputs: bool, **position
) -> TraceNode:
    """One node as read from the trace JSON's ``node`` and the extra file's ``extra`` (either may be
    None); ``checks_inputs`` when the extra file records which inputs each call changed in place."""
    ours = {} if extra is None else extra
    items = check_extra_node(ours, directory) if extra is not None else []
    source = ours if node is None else node  # a function record is only in the extra file
    inputs = source.get("inputs")
    inputs = {} if inputs is None else expect(inputs, dict, "inputs", "an object")
    outputs = source.get("outputs")
    remaining = iter(items)
    node_records = records(inputs, remaining, directory)
    output_records = None if outputs is None else records(outputs, remaining, directory)
    tensors = sum(record.is_tensor for record in (*node_records, *(output_records or ())))
    if items and len(items) != tensors:
        raise Malformed(
            f"lists {len(items)} tensors for a call with {tensors}: it belongs to another trace",
            in_extra=True,
        )
    legacy = {} if node is None else node  # older versions wrote these keys into the trace JSON
    return TraceNode(
        module_path=source["module_path"],
        inputs=node_records,
        outputs=output_records,
        exception=exception_text(ours[EXCEPTION_KEY] if EXCEPTION_KEY in ours else legacy.get(EXCEPTION_KEY)),
        function=optional_text(ours, FUNCTION_KEY) or optional_text(legacy, FUNCTION_KEY),
        module_class=optional_text(ours, MODULE_CLASS_KEY) or optional_text(legacy, MODULE_CLASS_KEY),
        inputs_modified=inputs_modified(ours) if checks_inputs and extra is not None else None,
        **position,
    )


def _nodes(
    tree: object, extra_tree: dict | None, checks_inputs: bool, trace_file: Path, extra_file: Path
) -> list[TraceNode]:
    if not isinstance(tree, dict) or not isinstance(tree.get("module_path"), str):
        raise TraceError(
            trace_file,
            "node #0 (the root) is not an object with a 'module_path' string: not a debugger trace",
        )
    if extra_tree is not None and extra_tree.get("module_path") != tree["module_path"]:
        raise TraceError(
            extra_file,
            f"node #0 {shown(extra_tree.get('module_path'))}: the trace's root is {shown(tree['module_path'])}: "
            "it belongs to another trace",
        )
    directory = trace_file.parent.resolve()
    calls: Counter[str] = Counter()
    nodes: list[TraceNode] = []
    stack: list[tuple[dict | None, dict | None, int]] = [(tree, extra_tree, 0)]
    while stack:
        node, extra, depth = stack.pop()
        path = (extra if node is None else node)["module_path"]
        try:
            pairs = _paired_children(node, extra)
            nodes.append(
                _read_node(
                    node,
                    extra,
                    directory,
                    checks_inputs,
                    order=len(nodes),
                    depth=depth,
                    call_index=calls[path],
                    is_leaf=not pairs,
                )
            )
        except Malformed as error:
            in_extra = error.in_extra or node is None
            raise TraceError(
                extra_file if in_extra else trace_file, f"node #{len(nodes)} {shown(path)}: {error}"
            ) from None
        calls[path] += 1
        stack.extend((child, extra_child, depth + 1) for child, extra_child in reversed(pairs))
    return nodes


def _distributed_run(document: dict | None, extra_file: Path) -> DistributedRun | None:
    """The extra file's ``distributed`` (None for a trace recorded in one process, or by rank 0 alone)."""
    value = None if document is None else document.get(DISTRIBUTED_KEY)
    if value is None:
        return None
    try:
        expect(value, dict, DISTRIBUTED_KEY, "an object")
        return DistributedRun(
            ranks=expect(value.get("ranks"), str, f"{DISTRIBUTED_KEY}.ranks", "a string"),
            rank=expect(value.get("rank"), int, f"{DISTRIBUTED_KEY}.rank", "an integer"),
            world_size=expect(value.get("world_size"), int, f"{DISTRIBUTED_KEY}.world_size", "an integer"),
        )
    except Malformed as error:
        raise TraceError(extra_file, str(error)) from None


def read_trace(path: str | os.PathLike) -> Trace:
    """Parse a trace given as a directory or as a ``_SUMMARY.json`` / ``_FULL_TENSORS.json`` path.

    Its extra file (``_EXTRA.json``), when present, adds module classes, statistics, function
    records and the inputs each call changed in place; a trace without one (written by upstream's
    debugger) reads without them.

    Raises:
        TraceError: the path holds no trace or several; a file is unreadable or holds a value the
            format does not allow (the message names the file and the node); the extra file belongs
            to other trace files.
    """
    trace_file = resolve_trace_file(path)
    _refuse_incomplete(trace_file)
    tree, data = load_json(trace_file)
    extra_file = trace_file.with_name(trace_base(trace_file.name) + EXTRA_SUFFIX)
    extra = read_extra(extra_file, trace_file, data)
    extra_tree = None if extra is None else extra["tree"]
    checks_inputs = extra is not None and extra["version"] >= INPUTS_MODIFIED_SINCE
    nodes = tuple(_nodes(tree, extra_tree, checks_inputs, trace_file, extra_file))
    tensors = [record for node in nodes for record in node.records if record.is_tensor]
    mode = "tensors" if tensors and all(record.file is not None for record in tensors) else "stats"
    return Trace(path=trace_file, mode=mode, nodes=nodes, distributed=_distributed_run(extra, extra_file))
