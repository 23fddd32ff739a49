"""Whether a skip or a failure of a run tells something of the model, or only of the run.

The analyzer reports environment guards (``@require_torch_gpu``, ``@slow``, a run-time check of
the device) as conditions, never as a model's skip; in a run, such a guard is a skip whose message
says what the machine lacked: a GPU or another accelerator, flash attention or another kernel,
``RUN_SLOW``, an optional package. Some failures are the run's too: an offline run could not fetch
a file from the Hub, a model class was the import placeholder of a missing package, an earlier test
of the same worker left torch's default device on ``meta``. Neither tells what pytest does with the
test on a machine that has everything.
"""

from __future__ import annotations

import re

ENVIRONMENT_REASON = re.compile(
    r"\b(gpus?|cuda|accelerators?|xpu|npu|hpu|mps|multi[- ]gpu)\b|flash|\bslow\b|test requires|"
    r"not installed|is not available|deepspeed|bitsandbytes|torchvision|timm|\bkernels\b|compute capability|"
    r"requires? .*(torch|optimum|quanto)",
    re.IGNORECASE,
)


# The import placeholder a library leaves for a model class whose optional package is missing.
PLACEHOLDER_FAILURE = re.compile(r"requires the (\S+) library but it was not found")
# A failure caused by state an earlier test of the same worker leaked, not by the test itself.
LEAKED_STATE_FAILURE = re.compile(r"Cannot copy out of meta tensor")
# A failure of the offline run to fetch a file from the Hub (edgetam builds its backbone from one;
# clvp's test class loads a dataset).
OFFLINE_FAILURE = re.compile(
    r"couldn't connect to 'https://huggingface\.co'|Couldn't reach '[^']+' on the Hub \(OfflineModeIsEnabled\)"
)
_RUN_FAILURES = (PLACEHOLDER_FAILURE, LEAKED_STATE_FAILURE, OFFLINE_FAILURE)


def names_environment(reason: str) -> bool:
    """Whether the skip ``reason`` says the machine lacked something (see the module's docstring)."""
    return ENVIRONMENT_REASON.search(reason) is not None


def failed_for_the_run(reason: str) -> bool:
    """Whether a failure's message says the run, not the test, failed (see the module's docstring)."""
    return any(failure.search(reason) for failure in _RUN_FAILURES)
