"""The output capturing names of ``transformers.utils.output_capturing``, as an upstream-compatible module.

Code written against upstream's module runs on this package with only its import line changed;
the same objects are importable from :mod:`model_debugging`. See docs/capture.md.
"""

from model_debugging.capture import (
    BaseModelOutput,
    BaseModelOutputWithPast,
    ModelOutput,
    OutputRecorder,
    capture_outputs,
    merge_with_config_defaults,
    remove_capture_hooks,
)

__all__ = [
    "BaseModelOutput",
    "BaseModelOutputWithPast",
    "ModelOutput",
    "OutputRecorder",
    "capture_outputs",
    "merge_with_config_defaults",
    "remove_capture_hooks",
]
