"""The names of a trace's files: the two JSON files, and tensor files that stay inside ``debug_path``.

The first top-level forward in a context keeps upstream's JSON names,
``<Class>_debug_tree_SUMMARY.json`` and ``<Class>_debug_tree_FULL_TENSORS.json``; later ones
(e.g. the steps of ``generate``) are numbered ``<Class>_debug_tree_2_...``, ``_3_``, ... instead
of overwriting the first.

Tensor file names follow upstream (module path + ``_inputs``/``_outputs`` + ``_{index}``/``_{key}``) and are
kept unchanged whenever they are already safe. A name is made safe for Linux, macOS and Windows
by replacing path separators, control and reserved characters, prefixing Windows device names
and shortening it below the file-name length limit. A name already handed out in the same
context (a module called again, a later top-level forward, or two names that only differ in
letter case or unsafe characters) gets ``__2``, ``__3``, ... appended.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

SUMMARY_SUFFIX = "_SUMMARY.json"
FULL_TENSORS_SUFFIX = "_FULL_TENSORS.json"
# present beside a trace's files from its first tensor file until both JSON files are written:
# a trace whose run was killed keeps it, and readers refuse that trace
INCOMPLETE_SUFFIX = "_INCOMPLETE"
# what this debugger records beyond upstream's files (see extra.py), beside them
EXTRA_SUFFIX = "_EXTRA.json"
SAFETENSORS_SUFFIX = ".safetensors"
# the key a tensor file stores its tensor under
TENSOR_KEY = "data"
# Keys of the extra file's nodes (older versions wrote them into the trace JSON itself):
# a function call's qualified name (record_functions)
FUNCTION_KEY = "function"
# a module call's class as "<Python module>.<qualname>", e.g. "transformers.models.llama.modeling_llama.LlamaAttention"
MODULE_CLASS_KEY = "module_class"
# {"type": ..., "message": ...} of the exception a call raised
EXCEPTION_KEY = "exception"
# in an exception record: the module called whose forward pre-hook raised it (its forward never ran)
FORWARD_PRE_HOOK_KEY = "forward_pre_hook_of"
# the paths of the input tensors a call changed in place (["args.0", ...]), when it changed any
INPUTS_MODIFIED_KEY = "inputs_modified"
# the statistics a tensor entry carries, in the order upstream writes them (float16/bfloat16/float32)
STAT_NAMES = ("mean", "std", "min", "max")
# A tensor's statistics in the extra file: JSON numbers, computed in float64 for floating dtypes
# (over the finite elements, with the counts of NaN and infinities), exactly (min, max, sum) for
# integers and bools, and for each part of a complex tensor.
STATISTICS_KEY = "statistics"
# How a tensor of a torch.distributed run is laid out over the ranks (see distributed.py), and, at
# the top of the extra file, the run itself: {"ranks": ..., "rank": ..., "world_size": ...}
PLACEMENT_KEY = "placement"
DISTRIBUTED_KEY = "distributed"
COMPLEX_PARTS = ("real", "imag")
# statistics compared for equality, never with a tolerance
EXACT_STATISTICS = frozenset({"nan", "posinf", "neginf", "real.nan", "real.posinf", "real.neginf"})
EXACT_STATISTICS |= {f"imag.{name}" for name in ("nan", "posinf", "neginf")}
# <>:"/\|?* are reserved on Windows; / and NUL on POSIX; control characters nowhere welcome;
# lone surrogates (possible in a Python str) cannot be encoded as a file name at all.
_UNSAFE_CHARACTERS = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f\ud800-\udfff]')
# Windows also reserves COM0/LPT0 and the superscript digits ¹²³ after COM/LPT.
_WINDOWS_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"{port}{digit}" for port in ("COM", "LPT") for digit in "0123456789¹²³"}
)
# 255 bytes is the common file-name limit; keep room for ".safetensors" and a "__N" suffix.
_MAX_STEM_BYTES = 200
_HASH_CHARACTERS = 16


def safe_file_stem(stem: str) -> str:
    """Return ``stem`` unchanged if it is a safe file name on every platform, else a safe variant."""
    safe = _UNSAFE_CHARACTERS.sub("_", stem)
    if safe.startswith(".") or not safe:
        safe = "_" + safe
    if safe.split(".", 1)[0].rstrip(" ").upper() in _WINDOWS_DEVICE_NAMES:
        safe = "_" + safe
    encoded = safe.encode("utf-8")
    if len(encoded) > _MAX_STEM_BYTES:
        digest = hashlib.sha256(stem.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARACTERS]
        head = encoded[: _MAX_STEM_BYTES - _HASH_CHARACTERS - 1].decode("utf-8", "ignore")
        safe = f"{head}-{digest}"
    return safe


def _as_compared_by_file_systems(name: str) -> str:
    """macOS and Windows file systems ignore letter case, and macOS Unicode normalization, by default."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


class FileNameRegistry:
    """Hands out unique ``.safetensors`` file names for one debugger context."""

    def __init__(self) -> None:
        self._taken: set[str] = set()
        self._lock = threading.Lock()  # traces of several threads share one context's names

    def claim(self, stem: str) -> str:
        """Return a file name (no directory) for ``stem`` that no earlier call returned."""
        base = safe_file_stem(stem)
        candidate, count = base, 1
        with self._lock:
            while _as_compared_by_file_systems(candidate) in self._taken:
                count += 1
                candidate = f"{base}__{count}"
            self._taken.add(_as_compared_by_file_systems(candidate))
        return candidate + SAFETENSORS_SUFFIX


def is_exact_dtype(dtype: str | None) -> bool:
    """Whether values of ``dtype`` (a ``repr(torch.dtype)``) compare exactly: integers and bools."""
    return dtype is not None and dtype.startswith(("torch.int", "torch.uint", "torch.bool"))


@dataclass(frozen=True)
class TracePaths:
    summary: Path
    full_tensors: Path
    incomplete_marker: Path
    extra: Path


def trace_paths(output_dir: str | os.PathLike, class_name: str, forward_number: int = 1) -> TracePaths:
    """Where the trace of the ``forward_number``-th top-level forward of a context is written."""
    base = f"{class_name}_debug_tree" if forward_number == 1 else f"{class_name}_debug_tree_{forward_number}"
    base = safe_file_stem(base)
    directory = Path(output_dir)
    return TracePaths(
        directory / f"{base}{SUMMARY_SUFFIX}",
        directory / f"{base}{FULL_TENSORS_SUFFIX}",
        directory / f"{base}{INCOMPLETE_SUFFIX}",
        directory / f"{base}{EXTRA_SUFFIX}",
    )


def trace_base(file_name: str) -> str:
    """``X_debug_tree`` for any file name of that trace (``X_debug_tree_SUMMARY.json``, ...)."""
    for suffix in (SUMMARY_SUFFIX, FULL_TENSORS_SUFFIX, EXTRA_SUFFIX, INCOMPLETE_SUFFIX):
        if file_name.endswith(suffix):
            return file_name[: -len(suffix)]
    return file_name
