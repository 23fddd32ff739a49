"""Collect hidden states and attentions of a forward pass without writing the bookkeeping in it.

See docs/capture.md.
"""

from model_debugging.capture.capturing import capture_outputs
from model_debugging.capture.defaults import merge_with_config_defaults
from model_debugging.capture.hooks import remove_capture_hooks
from model_debugging.capture.outputs import BaseModelOutput, BaseModelOutputWithPast, ModelOutput
from model_debugging.capture.recorder import OutputRecorder

__all__ = [
    "BaseModelOutput",
    "BaseModelOutputWithPast",
    "ModelOutput",
    "OutputRecorder",
    "capture_outputs",
    "merge_with_config_defaults",
    "remove_capture_hooks",
]
