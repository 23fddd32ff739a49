"""Every differential test starts and ends with both patch registries empty."""

import importlib.util

import pytest

if importlib.util.find_spec("transformers") is None:
    collect_ignore_glob = ["test_*.py"]  # the suite compares against transformers; nothing to run without it
else:
    from tests.differential.implementations import BOTH

    @pytest.fixture(autouse=True)
    def empty_patch_registries():
        for implementation in BOTH:
            implementation.patching.clear_patch_mapping()
        yield
        for implementation in BOTH:
            implementation.patching.clear_patch_mapping()
