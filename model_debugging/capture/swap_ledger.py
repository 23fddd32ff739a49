"""Which open `apply_patches` block swapped which module attribute, so blocks may close in any order.

Each attribute keeps a stack of the swaps made on it, oldest first. Closing a block takes its swaps
out of every stack wherever they sit; the attribute then holds the newest remaining replacement, or
the value it had before the first block touched it. Closing ``outer`` before ``inner`` thus keeps
``inner``'s replacement until ``inner`` closes, and then puts back the true original.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from types import ModuleType

__all__ = ["Swap", "SwapLedger"]


@dataclass
class Swap:
    """One block's swap of one attribute; ``found`` is what the attribute held just before it."""

    owner: object
    found: object
    replacement: type


class SwapLedger:
    """The swaps of every open block, per (module, attribute). Thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._stacks: dict[tuple[int, str], tuple[ModuleType, list[Swap]]] = {}

    def swap(self, owner: object, module: ModuleType, attribute: str, replacement: type) -> object:
        """Set ``module.attribute`` to ``replacement`` on behalf of ``owner``; returns what it held."""
        with self.lock:
            found = vars(module)[attribute]
            _, stack = self._stacks.setdefault((id(module), attribute), (module, []))
            stack.append(Swap(owner, found, replacement))
            setattr(module, attribute, replacement)
            return found

    def release(self, owner: object) -> None:
        """Undo ``owner``'s swaps, keeping the swaps of blocks still open."""
        with self.lock:
            for key, (module, stack) in list(self._stacks.items()):
                attribute = key[1]
                if not any(swap.owner is owner for swap in stack):
                    continue
                original = stack[0].found
                for position in reversed(range(len(stack))):
                    if stack[position].owner is not owner:
                        continue
                    removed = stack.pop(position)
                    if position < len(stack):
                        # the next swap found our replacement; what we found is what it must give back
                        stack[position].found = removed.found
                if stack:
                    setattr(module, attribute, stack[-1].replacement)
                else:
                    setattr(module, attribute, original)
                    del self._stacks[key]
