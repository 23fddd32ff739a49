"""The parent/child structure of a trace's module calls, which the flat node list leaves implicit."""

from __future__ import annotations

from dataclasses import dataclass

from model_debugging.debugger.trace_format.records import TensorRecord, Trace, TraceNode


@dataclass(frozen=True)
class CallTree:
    """``trace``'s calls with their parent, children and subtree span, all by index into ``trace.nodes``.

    ``relative_paths`` are module paths without the model's class name (``""`` for the root).
    """

    trace: Trace
    parent: tuple[int, ...]  # -1 for the root
    children: tuple[tuple[int, ...], ...]
    end: tuple[int, ...]  # the subtree of call i is range(i, end[i])
    relative_paths: tuple[str, ...]

    @classmethod
    def of(cls, trace: Trace) -> CallTree:
        nodes = trace.nodes
        parent = [-1] * len(nodes)
        children: list[list[int]] = [[] for _ in nodes]
        end = [len(nodes)] * len(nodes)
        open_calls: list[int] = []
        for index, node in enumerate(nodes):
            while open_calls and nodes[open_calls[-1]].depth >= node.depth:
                end[open_calls.pop()] = index
            if open_calls:
                parent[index] = open_calls[-1]
                children[open_calls[-1]].append(index)
            open_calls.append(index)
        root = trace.root_path
        relative = tuple(
            "" if node.module_path == root else node.module_path.removeprefix(root + ".") for node in nodes
        )
        return cls(trace, tuple(parent), tuple(map(tuple, children)), tuple(end), relative)

    def node(self, index: int) -> TraceNode:
        return self.trace.nodes[index]

    def is_leaf(self, index: int) -> bool:
        return not self.children[index]

    def is_block(self, index: int) -> bool:
        """Whether call ``index`` is a numbered block (``layers.3``, ``h.0``) inside no other numbered
        call (T5's ``block.1.layer.0`` is a part of a block)."""
        if not _numbered(self.relative_paths[index]):
            return False
        ancestor = self.parent[index]
        while ancestor >= 0 and not _numbered(self.relative_paths[ancestor]):
            ancestor = self.parent[ancestor]
        return ancestor < 0

    def contains(self, ancestor: int, index: int) -> bool:
        """Whether call ``index`` runs inside call ``ancestor`` (or is it)."""
        return ancestor <= index < self.end[ancestor]


def _numbered(path: str) -> bool:
    return path.rpartition(".")[2].isdigit()


def tensor_records(records: tuple[TensorRecord, ...] | None) -> tuple[TensorRecord, ...]:
    """The tensors among ``records``, in the order they were recorded."""
    return tuple(record for record in records or () if record.is_tensor)
