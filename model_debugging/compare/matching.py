"""Which module calls of two traces are compared with each other."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from model_debugging.compare.renames import RenameRule, apply_rename_rules
from model_debugging.debugger.trace_format.records import Trace, TraceNode


def match_keys(trace: Trace, rules: Sequence[RenameRule]) -> list[tuple[str, int]]:
    """(renamed path relative to the model, call index among calls with that path) per node."""
    root = trace.root_path
    calls: Counter[str] = Counter()
    keys = []
    for node in trace.nodes:
        path = node.module_path
        relative = "" if path == root else path.removeprefix(root + ".")
        renamed = apply_rename_rules(rules, relative)
        keys.append((renamed, calls[renamed]))
        calls[renamed] += 1
    return keys


def describe_call(node: TraceNode) -> str:
    return node.module_path if node.call_index == 0 else f"{node.module_path} (call {node.call_index})"
