"""The class patch registry under the module path transformers uses (``transformers.monkey_patching``).

Code written against upstream's module runs on this package with only the package prefix changed;
the same objects are importable from :mod:`model_debugging`. See docs/capture.md.
"""

from model_debugging.capture import (
    DEFAULT_PATCH_NAMESPACES,
    PatchKeyNotFoundError,
    apply_patches,
    clear_patch_mapping,
    get_patch_mapping,
    get_patch_namespaces,
    patch_output_recorders,
    register_patch_mapping,
    register_patch_namespace,
    unregister_patch_mapping,
    unregister_patch_namespace,
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
