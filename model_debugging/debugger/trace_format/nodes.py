"""One node of a trace as read: its values checked against the format and made records.

A node comes from the trace JSON, with what the extra file adds for it (see :mod:`.extra`), or,
for a function record, from the extra file alone. Every value the reader uses must have the type
the format gives it; anything else raises :class:`Malformed` with a message relative to the node
(``inputs.args.0.mean is int 3, expected a string``), which ``read_trace`` prefixes with the file
and the node. Keys the format does not know are ignored, as upstream's readers do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from model_debugging.debugger.trace_format.entries import parse_shape, parse_stat, value_leaves
from model_debugging.debugger.trace_format.extra import FILE_KEY
from model_debugging.debugger.trace_format.json_input import shown
from model_debugging.debugger.trace_format.names import (
    COMPLEX_PARTS,
    EXCEPTION_KEY,
    FORWARD_PRE_HOOK_KEY,
    FUNCTION_KEY,
    INPUTS_MODIFIED_KEY,
    MODULE_CLASS_KEY,
    PLACEMENT_KEY,
    SAFETENSORS_SUFFIX,
    STAT_NAMES,
    STATISTICS_KEY,
)
from model_debugging.debugger.trace_format.records import Placement, TensorRecord


class Malformed(Exception):
    """A value of one node is not what the format allows; ``in_extra`` when it is in the extra file."""

    def __init__(self, message: str, in_extra: bool = False):
        super().__init__(message)
        self.in_extra = in_extra


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def expect(value: Any, kind: type, where: str, expected: str) -> Any:
    """``value`` when it is a ``kind`` (a bool is no number here), else :class:`Malformed`."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise Malformed(f"{where} is {_type_name(value)} {shown(value)}, expected {expected}")
    return value


def children_of(node: dict, in_extra: bool = False) -> list[dict]:
    """The ``children`` of ``node``, each checked to be a node (an object with a ``module_path`` string)."""
    children = node.get("children")
    if children is None:
        return []
    if not isinstance(children, list):
        raise Malformed(f"children is {_type_name(children)}, expected a list of nodes", in_extra)
    for index, child in enumerate(children):
        if not isinstance(child, dict) or not isinstance(child.get("module_path"), str):
            raise Malformed(
                f"children[{index}] is not a node (an object with a 'module_path' string)", in_extra
            )
    return children


def _statistics(value: Any, where: str) -> tuple[tuple[str, int | float | None], ...]:
    """A tensor's ``statistics`` as (name, number) pairs; complex parts as ``real.mean``."""
    if value is None:
        return ()
    expect(value, dict, where, "an object")
    pairs: list[tuple[str, int | float | None]] = []
    for name, item in value.items():
        if name in COMPLEX_PARTS and isinstance(item, dict):
            pairs += [(f"{name}.{part}", number) for part, number in _statistics(item, f"{where}.{name}")]
        elif item is None or (isinstance(item, (int, float)) and not isinstance(item, bool)):
            pairs.append((name, item))
        else:
            raise Malformed(f"{where}.{name} is {_type_name(item)} {shown(item)}, expected a number or null")
    return tuple(pairs)


def _tensor_file(value: Any, where: str, directory: Path) -> Path:
    expect(value, str, where, "repr lines or a file name")
    if not value.endswith(SAFETENSORS_SUFFIX):
        raise Malformed(
            f"{where} is {shown(value)}: neither repr lines nor a '{SAFETENSORS_SUFFIX}' file name"
        )
    file = (directory / value).resolve()
    if not file.is_relative_to(directory):
        raise Malformed(f"{where}: tensor file {shown(value)} lies outside the trace directory")
    return file


def _shape(value: Any, where: str) -> tuple[int, ...]:
    expect(value, list, where, "a list of sizes")
    return tuple(expect(size, int, f"{where}[{index}]", "an integer") for index, size in enumerate(value))


def _placement(value: Any, where: str) -> Placement | None:
    """A tensor's ``placement`` (see :class:`.records.Placement`)."""
    if value is None:
        return None
    expect(value, dict, where, "an object")
    placements = expect(value.get("placements"), list, f"{where}.placements", "a list of strings")
    local_shapes = expect(value.get("local_shapes", []), list, f"{where}.local_shapes", "a list of shapes")
    return Placement(
        placements=tuple(
            expect(item, str, f"{where}.placements[{index}]", "a string")
            for index, item in enumerate(placements)
        ),
        source=expect(value.get("source"), str, f"{where}.source", "a string"),
        local_shapes=tuple(
            _shape(shape, f"{where}.local_shapes[{index}]") for index, shape in enumerate(local_shapes)
        ),
    )


def _tensor_record(sub_path: str, entry: dict, extra: dict, directory: Path) -> TensorRecord:
    where = sub_path or "the value"
    stats = tuple(
        (name, parse_stat(expect(entry[name], str, f"{where}.{name}", "a string")))
        for name in STAT_NAMES
        if name in entry
    )
    value, file, lines = entry.get("value"), None, ()
    if isinstance(value, list):
        lines = tuple(
            expect(line, str, f"{where}.value[{index}]", "a string") for index, line in enumerate(value)
        )
    elif value is not None:
        file = _tensor_file(value, f"{where}.value", directory)
    if FILE_KEY in extra:  # its data is in another file than the JSON names (a module called twice)
        file = _tensor_file(extra[FILE_KEY], f"{where}: {FILE_KEY}", directory)
    # older versions wrote the statistics into the entry itself
    statistics = extra[STATISTICS_KEY] if STATISTICS_KEY in extra else entry.get(STATISTICS_KEY)
    return TensorRecord(
        sub_path=sub_path,
        shape=parse_shape(entry["shape"]),
        dtype=entry["dtype"],
        stats=stats,
        statistics=_statistics(statistics, f"{where}.{STATISTICS_KEY}"),
        file=file,
        value_lines=lines,
        placement=_placement(extra.get(PLACEMENT_KEY), f"{where}.{PLACEMENT_KEY}"),
    )


def _leaf_text(value: Any) -> str | None:
    """A non-tensor leaf (the repr upstream writes) as text; JSON numbers and booleans as written."""
    return value if value is None or isinstance(value, str) else json.dumps(value)


def records(value: Any, extras: Iterator[dict], directory: Path) -> tuple[TensorRecord, ...]:
    """The leaves of ``value`` (``inputs`` or ``outputs``) as records; tensors take the next item of ``extras``."""
    found = []
    for sub_path, leaf, is_tensor in value_leaves(value):
        if is_tensor:
            found.append(_tensor_record(sub_path, leaf, next(extras, {}), directory))
        else:
            found.append(TensorRecord(sub_path=sub_path, text=_leaf_text(leaf)))
    return tuple(found)


def exception_text(record: Any) -> str | None:
    """``{"type": "ValueError", "message": "..."}`` (the debugger's exception record) as one line, naming
    the module whose forward pre-hook raised it when the record says so."""
    if record is None:
        return None
    expect(record, dict, EXCEPTION_KEY, 'an object {"type": ..., "message": ...}')
    kind = expect(record.get("type", "exception"), str, f"{EXCEPTION_KEY}.type", "a string")
    message = expect(record.get("message", ""), str, f"{EXCEPTION_KEY}.message", "a string")
    text = f"{kind}: {message}" if message else kind
    hooked = record.get(FORWARD_PRE_HOOK_KEY)
    if hooked is None:
        return text
    hooked = expect(hooked, str, f"{EXCEPTION_KEY}.{FORWARD_PRE_HOOK_KEY}", "a module path")
    return f"{text} (raised by a forward pre-hook of {hooked}, whose forward did not run)"


def optional_text(node: dict, key: str) -> str | None:
    """The string under ``key`` (None when absent or empty)."""
    value = node.get(key)
    return None if value is None else expect(value, str, key, "a string") or None


def inputs_modified(extra: dict) -> tuple[str, ...]:
    """The paths under ``inputs_modified`` (empty when absent: the call changed none in place)."""
    paths = expect(extra.get(INPUTS_MODIFIED_KEY, []), list, INPUTS_MODIFIED_KEY, "a list of input paths")
    return tuple(
        expect(path, str, f"{INPUTS_MODIFIED_KEY}[{index}]", "a string") for index, path in enumerate(paths)
    )


def check_extra_node(extra: dict, directory: Path) -> list[dict]:
    """Check what the extra file records for one node; return its per-tensor items."""
    try:
        for key in (MODULE_CLASS_KEY, FUNCTION_KEY):
            optional_text(extra, key)
        exception_text(extra.get(EXCEPTION_KEY))
        inputs_modified(extra)
        items = extra.get("tensors", [])
        expect(items, list, "tensors", "a list")
        for index, item in enumerate(items):
            expect(item, dict, f"tensors[{index}]", "an object")
            _statistics(item.get(STATISTICS_KEY), f"tensors[{index}].{STATISTICS_KEY}")
            if FILE_KEY in item:
                _tensor_file(item[FILE_KEY], f"tensors[{index}].{FILE_KEY}", directory)
            _placement(item.get(PLACEMENT_KEY), f"tensors[{index}].{PLACEMENT_KEY}")
        if FUNCTION_KEY in extra and extra.get("inputs") is not None:
            expect(extra["inputs"], dict, "inputs", "an object")
    except Malformed as error:
        raise Malformed(str(error), in_extra=True) from None
    return items
