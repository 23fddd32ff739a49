"""The machine a common test is evaluated for: one that has everything (an accelerator, every
optional package and kernel).

Skips that depend on the machine are environment conditions, never a model's skip (the analyzer's
contract): evaluating them as if the machine had everything leaves only the model's own skips.
"""

from __future__ import annotations

# `torch_device` and `get_device_properties()` as on a recent CUDA GPU (compute capability 9.0).
DEVICE = "cuda"
DEVICE_PROPERTIES = ("cuda", 9, 0)
ENVIRONMENT_NAMES = {"torch_device": DEVICE}


def is_availability_check(name: str) -> bool:
    """``is_flash_attn_2_available``, ``is_torch_bf16_available_on_device``, ...: true on that machine."""
    return name.startswith("is_") and "available" in name
