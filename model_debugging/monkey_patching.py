"""Replace module classes by name or pattern, while building models and in their output recorders.

See docs/capture.md.
"""

from model_debugging.capture.patching import (
    DEFAULT_PATCH_NAMESPACES,
    apply_patches,
    get_patch_namespaces,
    patch_output_recorders,
    register_patch_namespace,
    unregister_patch_namespace,
)
from model_debugging.capture.registry import (
    PatchKeyNotFoundError,
    clear_patch_mapping,
    get_patch_mapping,
    register_patch_mapping,
    unregister_patch_mapping,
)

__all__ = [
    "DEFAULT_PATCH_NAMESPACES",
    "PatchKeyNotFoundError",
    "apply_patches",
    "clear_patch_mapping",
    "get_patch_mapping",
    "get_patch_namespaces",
    "patch_output_recorders",
    "register_patch_mapping",
    "register_patch_namespace",
    "unregister_patch_mapping",
    "unregister_patch_namespace",
]
