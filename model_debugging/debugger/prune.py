"""Layer pruning: keep the first and the last block of a run of numbered layers.

Upstream builds the whole tree and prunes it at the end. The rule only depends on a call's
module path and the paths of its own children, so :class:`ChildCalls` applies it while the
tree grows: a numbered call that starts after a first layer block can be recorded *deferred*
(its tensors cloned, not formatted) and dropped unformatted once a later block replaces it
as the last one. The resulting tree is the one upstream's end-of-forward pruning gives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from torch import nn

# a module path ending in ".<number>", e.g. "LlamaForCausalLM.model.layers.3"
_NUMBERED_PATH = re.compile(r"(.*)\.(\d+)$")


def is_numbered(module_path: str) -> bool:
    return _NUMBERED_PATH.match(module_path) is not None


def paths_with_later_siblings(
    named_modules: Sequence[tuple[str, nn.Module]], root_path: str
) -> frozenset[str]:
    """Paths of numbered submodules whose container holds a higher-numbered one (``layers.0`` of 8).

    ``named_modules`` is the model's ``named_modules()``. Such a block is expected to run before
    another block of its run, so it will most likely be pruned; the tracer keeps its tensors by
    reference instead of copying them.
    """
    paths = set()
    for name, module in named_modules:
        # its children's names, read directly: a generator per module costs more than the rest of this
        numbers = [int(child) for child in module._modules if child.isdigit()]
        if numbers:
            prefix, highest = (f"{root_path}.{name}" if name else root_path), max(numbers)
            paths.update(f"{prefix}.{number}" for number in numbers if number < highest)
    return frozenset(paths)


def block_infix(module_path: str) -> str | None:
    """``".3."`` for a numbered path (``...layers.3``), which its own submodules' paths contain; else None."""
    match = _NUMBERED_PATH.match(module_path)
    return None if match is None else f".{match.group(2)}."


def _is_layer_block(infix: str | None, child_paths: Sequence[str]) -> bool:
    """True for a numbered call (``infix``: see :func:`block_infix`) whose children are its own
    submodules (``...layers.3.mlp``)."""
    return infix is not None and any(infix in path for path in child_paths)


class ChildCalls:
    """The recorded children of one call, pruned of middle layer blocks as they complete.

    Args:
        prune_layers (`bool`): apply layer pruning (``do_prune_layers``).
    """

    def __init__(self, prune_layers: bool):
        self.records: list = []
        self._prune_layers = prune_layers
        self._layer_blocks = 0
        self._last_block = None

    def may_be_pruned(self, module_path: str) -> bool:
        """Whether a call starting now could end up as a middle layer block (so may be deferred)."""
        return self._prune_layers and self._layer_blocks > 0 and is_numbered(module_path)

    def add(self, record, child_paths: Sequence[str], infix: str | None) -> bool:
        """Append a finished child (``infix``: :func:`block_infix` of its path); return False while
        it is held as the possible last layer block."""
        self.records.append(record)
        if not (self._prune_layers and _is_layer_block(infix, child_paths)):
            return True
        self._layer_blocks += 1
        if self._layer_blocks == 1:
            return True
        if self._last_block is not None:
            # an earlier held block is now known to be in the middle of the run
            self.records.remove(self._last_block)
        self._last_block = record
        return False

    def drop_block_before(self, module_path: str) -> None:
        """``module_path`` (a numbered call of this parent) has just started a child call.

        It will be a layer block when it ends, so the block held as the possible last one is now
        known to be in the middle of the run: dropped now, its tensors freed while the later block
        runs, instead of when it ends (what :meth:`add` would do then).
        """
        held = self._last_block
        if held is not None and held.module_path != module_path and is_numbered(module_path):
            self.records.remove(held)
            self._last_block = None

    def take_last_block(self):
        """The held block, now known to be the last of its run (None if there is none)."""
        record, self._last_block = self._last_block, None
        return record
