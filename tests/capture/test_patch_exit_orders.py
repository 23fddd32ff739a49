"""Property: `apply_patches` blocks entered in sequence and closed in any order.

While blocks are open, each patched attribute holds the replacement of the newest open block that
patches it, else its original; once all are closed, every attribute is its original object again.
"""

from __future__ import annotations

import sys
import types

from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from model_debugging.monkey_patching import (
    apply_patches,
    clear_patch_mapping,
    register_patch_mapping,
)

NAMESPACE = "exit_order_ns"
ATTRIBUTES = ("First", "Second", "Third")
ORIGINALS = {name: type(name, (nn.Module,), {}) for name in ATTRIBUTES}
REPLACEMENTS = [type(f"Replacement{index}", (nn.Module,), {}) for index in range(3)]

block_mappings = st.lists(
    st.dictionaries(st.sampled_from(ATTRIBUTES), st.sampled_from(REPLACEMENTS), min_size=1),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(mappings=block_mappings, data=st.data())
def test_any_exit_order_leaves_each_attribute_as_the_open_blocks_say(mappings, data):
    exit_order = data.draw(st.permutations(range(len(mappings))))
    module = types.ModuleType(f"{NAMESPACE}.models")
    vars(module).update(ORIGINALS)
    sys.modules[module.__name__] = module
    try:
        blocks = []
        for mapping in mappings:
            clear_patch_mapping()
            register_patch_mapping(mapping)
            block = apply_patches(namespaces=[NAMESPACE])
            block.__enter__()
            blocks.append(block)
        open_blocks = list(range(len(mappings)))
        for closing in exit_order:
            blocks[closing].__exit__(None, None, None)
            open_blocks.remove(closing)
            for name in ATTRIBUTES:
                patching = [index for index in open_blocks if name in mappings[index]]
                expected = mappings[patching[-1]][name] if patching else ORIGINALS[name]
                assert getattr(module, name) is expected, (name, closing, open_blocks)
        assert {name: getattr(module, name) for name in ATTRIBUTES} == ORIGINALS
    finally:
        clear_patch_mapping()
        del sys.modules[module.__name__]
