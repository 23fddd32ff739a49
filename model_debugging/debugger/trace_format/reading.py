"""Read a model addition debugger trace into plain records, without importing torch.

A trace is the pair ``<Class>_debug_tree_SUMMARY.json`` / ``<Class>_debug_tree_FULL_TENSORS.json``
(plus one ``.safetensors`` file per tensor when it was recorded with ``use_repr=False``).

Example::

    trace = read_trace("debug_output/")          # a directory or either JSON file
    for node in trace.nodes:                      # execution order
        print(node.module_path, [entry.sub_path for entry in node.outputs])
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from model_debugging.debugger.trace_format.names import (
    COMPLEX_PARTS,
    FULL_TENSORS_SUFFIX,
    FUNCTION_KEY,
    INCOMPLETE_SUFFIX,
    MODULE_CLASS_KEY,
    SAFETENSORS_SUFFIX,
    STAT_NAMES,
    STATISTICS_KEY,
    SUMMARY_SUFFIX,
)
from model_debugging.debugger.trace_format.records import TensorRecord, Trace, TraceError, TraceNode

# "tensor(-8.9514e-01, device='cuda:0')", "tensor(nan)", "tensor(0.)", "tensor(1.2500e-01, dtype=torch.bfloat16)"
_STAT_RE = re.compile(r"^tensor\(\s*([-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?))\s*[,)]", re.IGNORECASE)
_SHAPE_RE = re.compile(r"^torch\.Size\(\[([\d,\s]*)\]\)$")


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


def _refuse_incomplete(trace_file: Path) -> None:
    name = trace_file.name
    for suffix in (SUMMARY_SUFFIX, FULL_TENSORS_SUFFIX, INCOMPLETE_SUFFIX):
        name = name.removesuffix(suffix)
    marker = trace_file.with_name(name + INCOMPLETE_SUFFIX)
    if marker.exists():
        raise TraceError(
            trace_file,
            f"incomplete trace: the run that wrote it stopped before finishing (marker file {marker.name}); "
            "trace the model again",
        )


def parse_stat(text: Any) -> float | None:
    """The number in a stats repr such as ``tensor(-8.9514e-01, device='cuda:0')``; None if there is none."""
    match = _STAT_RE.match(text) if isinstance(text, str) else None
    return float(match.group(1)) if match else None


def parse_shape(text: Any) -> tuple[int, ...] | None:
    """``torch.Size([1, 8, 32])`` -> ``(1, 8, 32)``; None if ``text`` is not a shape repr."""
    match = _SHAPE_RE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    return tuple(int(size) for size in match.group(1).replace(" ", "").split(",") if size)


def _is_tensor_entry(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("dtype"), str)
        and value["dtype"].startswith("torch.")
        and parse_shape(value.get("shape")) is not None
    )


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def _safetensors_file(value: Any, trace_file: Path) -> Path | None:
    if not (isinstance(value, str) and value.endswith(SAFETENSORS_SUFFIX)):
        return None
    directory = trace_file.parent.resolve()
    file = (directory / value).resolve()
    if not file.is_relative_to(directory):
        raise TraceError(trace_file, f"tensor file {value!r} lies outside the trace directory")
    return file


def _repr_lines(value: Any) -> tuple[str, ...]:
    is_lines = isinstance(value, list) and all(isinstance(line, str) for line in value)
    return tuple(value) if is_lines else ()


def _statistics(value: Any, trace_file: Path, where: str) -> tuple[tuple[str, int | float | None], ...]:
    """The extra ``statistics`` of a tensor entry as (name, number) pairs; complex parts as "real.mean"."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise TraceError(
            trace_file, f"{where}: {STATISTICS_KEY!r} is a {type(value).__name__}, expected an object"
        )
    pairs: list[tuple[str, int | float | None]] = []
    for name, item in value.items():
        if name in COMPLEX_PARTS and isinstance(item, dict):
            pairs += [(f"{name}.{part}", number) for part, number in _statistics(item, trace_file, where)]
        elif item is None or (isinstance(item, (int, float)) and not isinstance(item, bool)):
            pairs.append((name, item))
        else:
            raise TraceError(
                trace_file, f"{where}: statistic {name!r} is {item!r}, expected a number or null"
            )
    return tuple(pairs)


def _flatten(value: Any, prefix: str, trace_file: Path) -> Iterator[TensorRecord]:
    if _is_tensor_entry(value):
        stats = tuple((name, parse_stat(value[name])) for name in STAT_NAMES if name in value)
        yield TensorRecord(
            sub_path=prefix,
            shape=parse_shape(value["shape"]),
            dtype=value["dtype"],
            stats=stats,
            statistics=_statistics(value.get(STATISTICS_KEY), trace_file, prefix or "value"),
            file=_safetensors_file(value.get("value"), trace_file),
            value_lines=_repr_lines(value.get("value")),
        )
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(item, _join(prefix, key), trace_file)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _flatten(item, _join(prefix, index), trace_file)
    else:
        yield TensorRecord(sub_path=prefix, text=None if value is None else str(value))


def _exception_text(record: Any) -> str | None:
    """``{"type": "ValueError", "message": "..."}`` (the debugger's exception record) as one line."""
    if isinstance(record, dict):
        kind, message = record.get("type", "exception"), record.get("message")
        return f"{kind}: {message}" if message else str(kind)
    return None if record is None else str(record)


def _optional_text(value: Any) -> str | None:
    """An optional extra key's string; anything else (absent, or not a string) counts as not recorded."""
    return value if isinstance(value, str) and value else None


def _walk(tree: dict, trace_file: Path) -> Iterator[TraceNode]:
    calls: Counter[str] = Counter()
    stack: list[tuple[Any, int]] = [(tree, 0)]
    order = 0
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict) or not isinstance(node.get("module_path"), str):
            raise TraceError(trace_file, f"node #{order} has no 'module_path' string: not a debugger trace")
        path = node["module_path"]
        children = node.get("children") or []
        if not isinstance(children, list):
            raise TraceError(
                trace_file, f"'children' of {path!r} is a {type(children).__name__}, expected a list"
            )
        outputs = node.get("outputs")
        yield TraceNode(
            order=order,
            module_path=path,
            depth=depth,
            call_index=calls[path],
            is_leaf=not children,
            inputs=tuple(_flatten(node.get("inputs") or {}, "", trace_file)),
            outputs=None if outputs is None else tuple(_flatten(outputs, "", trace_file)),
            exception=_exception_text(node.get("exception")),
            function=_optional_text(node.get(FUNCTION_KEY)),
            module_class=_optional_text(node.get(MODULE_CLASS_KEY)),
        )
        calls[path] += 1
        order += 1
        stack.extend((child, depth + 1) for child in reversed(children))


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKeyError(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return result


def read_trace(path: str | os.PathLike) -> Trace:
    """Parse a trace given as a directory or as a ``_SUMMARY.json`` / ``_FULL_TENSORS.json`` path.

    Raises:
        TraceError: the path holds no trace, several traces, or a file that is not a debugger trace.
    """
    trace_file = resolve_trace_file(path)
    _refuse_incomplete(trace_file)
    try:
        tree = json.loads(
            trace_file.read_text(encoding="utf-8"), object_pairs_hook=_object_without_duplicates
        )
        nodes = tuple(_walk(tree, trace_file))
    except (OSError, UnicodeDecodeError) as error:
        raise TraceError(trace_file, f"cannot read file: {error}") from None
    except json.JSONDecodeError as error:
        raise TraceError(trace_file, f"invalid JSON at line {error.lineno}: {error.msg}") from None
    except _DuplicateKeyError as error:
        raise TraceError(
            trace_file, f"key {error.key!r} appears twice in one object: one record would be lost"
        ) from None
    except RecursionError:
        raise TraceError(trace_file, "nested too deeply to read (beyond Python's recursion limit)") from None
    tensors = [record for node in nodes for record in node.records if record.is_tensor]
    mode = "tensors" if tensors and all(record.file is not None for record in tensors) else "stats"
    return Trace(path=trace_file, mode=mode, nodes=nodes)
