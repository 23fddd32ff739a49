"""Output capturing decorators and the class patch registry.

- :mod:`.capturing`, :mod:`.recorder`, :mod:`.hooks`, :mod:`.requests`: ``@capture_outputs`` and the
  ``OutputRecorder`` hooks that collect hidden states and attentions;
- :mod:`.defaults` and :mod:`.outputs`: ``@merge_with_config_defaults`` and the output dataclasses;
- :mod:`.registry`, :mod:`.patching`, :mod:`.swap_ledger`: the class patch registry and ``apply_patches``.

Users import these names from :mod:`model_debugging`, or from the upstream-compatible modules
:mod:`model_debugging.output_capturing` and :mod:`model_debugging.monkey_patching`.
"""

from model_debugging.capture.capturing import capture_outputs
from model_debugging.capture.defaults import merge_with_config_defaults
from model_debugging.capture.hooks import remove_capture_hooks
from model_debugging.capture.outputs import BaseModelOutput, BaseModelOutputWithPast, ModelOutput
from model_debugging.capture.patching import (
    DEFAULT_PATCH_NAMESPACES,
    apply_patches,
    get_patch_namespaces,
    patch_output_recorders,
    register_patch_namespace,
    unregister_patch_namespace,
)
from model_debugging.capture.recorder import OutputRecorder
from model_debugging.capture.registry import (
    PatchKeyNotFoundError,
    clear_patch_mapping,
    get_patch_mapping,
    register_patch_mapping,
    unregister_patch_mapping,
)

__all__ = [
    "DEFAULT_PATCH_NAMESPACES",
    "BaseModelOutput",
    "BaseModelOutputWithPast",
    "ModelOutput",
    "OutputRecorder",
    "PatchKeyNotFoundError",
    "apply_patches",
    "capture_outputs",
    "clear_patch_mapping",
    "get_patch_mapping",
    "get_patch_namespaces",
    "merge_with_config_defaults",
    "patch_output_recorders",
    "register_patch_mapping",
    "register_patch_namespace",
    "remove_capture_hooks",
    "unregister_patch_mapping",
    "unregister_patch_namespace",
]
