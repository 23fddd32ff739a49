"""Whether a skip reason written by a test names the machine rather than the model.

The analyzer reports environment guards (``@require_torch_gpu``, ``@slow``, a run-time check of
the device) as conditions, never as a model's skip; in a run, such a guard is a skip whose message
says what the machine lacked: a GPU or another accelerator, flash attention or another kernel,
``RUN_SLOW``, an optional package. Such a skip tells nothing of the model.
"""

from __future__ import annotations

import re

ENVIRONMENT_REASON = re.compile(
    r"\b(gpus?|cuda|accelerators?|xpu|npu|hpu|mps|multi[- ]gpu)\b|flash|\bslow\b|test requires|"
    r"not installed|is not available|deepspeed|bitsandbytes|torchvision|timm|\bkernels\b|compute capability|"
    r"requires? .*(torch|optimum|quanto)",
    re.IGNORECASE,
)


def names_environment(reason: str) -> bool:
    """Whether the skip ``reason`` says the machine lacked something (see the module's docstring)."""
    return ENVIRONMENT_REASON.search(reason) is not None
