"""Turning forward inputs and outputs into JSON-ready trace values.

Tensors become a :class:`TensorEntry` (``shape``, ``dtype``, ``value``, and ``mean``/``std``/
``min``/``max`` for float16/bfloat16/float32 tensors, each exactly the repr upstream prints).
Lists and tuples become lists, dicts (``ModelOutput`` included) become dicts, anything else
becomes its repr. Memory addresses are replaced by ``0xXXXXXXXX``. Which tensor is recorded for
a value is the :class:`.distributed.TensorSource`'s choice: by default the value itself, or a
DTensor's local shard.

A value may be captured *deferred* (see :class:`Capture`), for a record that will most likely
be dropped by layer pruning: the tensor is kept instead of formatted, and
:meth:`ValueSerializer.resolve` formats it later, should the tracer find the record stays after
all. It is kept as a copy-on-write clone where torch can make one (a CPU tensor that owns its
storage: the values at the call's entry, with no byte copied unless the model changes them), else
by reference (a warning then names a tensor modified in place in between); an inference-mode
tensor, which has no version counter to tell, is kept as a copy.
"""

from __future__ import annotations

import enum
import re
import warnings
from operator import itemgetter
from pathlib import Path
from typing import Any

import torch

from model_debugging.debugger.background import BackgroundWork, PendingStatistics
from model_debugging.debugger.device_statistics import DeviceBatch, DevicePending, stays_on_device
from model_debugging.debugger.distributed import LocalTensors, TensorSource
from model_debugging.debugger.fused_statistics import make_buffers
from model_debugging.debugger.reuse import RecentTensors, copy_on_write
from model_debugging.debugger.single_thread import CALLERS_THREADS_FROM, core_left_free
from model_debugging.debugger.statistics import tensor_statistics, threads_off_thread
from model_debugging.debugger.tensor_repr import PrintOptions, tensor_repr
from model_debugging.debugger.trace_format.json_text import key_as_string
from model_debugging.debugger.trace_format.names import FileNameRegistry
from model_debugging.debugger.trace_format.records import TensorEntry

_MEMORY_ADDRESS = re.compile(r"object at 0x[0-9A-Fa-f]+")
# What safetensors can store; other tensors are recorded as their repr even with use_repr=False.
_SAFETENSORS_DTYPES = frozenset(
    {
        *(torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.complex64, torch.bool),
        *(torch.int64, torch.int32, torch.int16, torch.int8),
        *(torch.uint64, torch.uint32, torch.uint16, torch.uint8),
        *(torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz),
    }
)
# with use_repr and no core left free, the statistics of a tensor of this many elements or more are
# computed by the worker thread, those of a smaller one on the forward's (see ValueSerializer._statistics_off_thread)
WORKER_STATISTICS_FROM = CALLERS_THREADS_FROM
# Lists, tuples and dicts nested deeper than this are recorded as a placeholder: the trace stays
# readable (JSON readers recurse per level) and a forward never fails for the debugger's recursion.
MAX_VALUE_DEPTH = 100


def sanitize_addresses(text: str) -> str:
    """Replace ``object at 0x7f...`` by a stable placeholder so traces diff cleanly."""
    return _MEMORY_ADDRESS.sub("object at 0xXXXXXXXX", text) if "0x" in text else text


class Capture(enum.Enum):
    """How a recorded tensor is kept until it is formatted."""

    NOW = "format it now"
    REFERENCE = "keep the tensor itself; for records that will most likely be dropped"


class _DeferredTensor:
    __slots__ = ("tensor", "version", "stem", "file_name")

    def __init__(self, tensor: torch.Tensor, version: int | None, stem: str, file_name: str | None):
        self.tensor = tensor
        self.version = version  # the tensor's version counter when held by reference
        self.stem = stem
        self.file_name = file_name


def _version(tensor: torch.Tensor) -> int | None:
    """The in-place modification counter; None for inference-mode tensors, which have none."""
    return None if tensor.is_inference() else tensor._version


_DTYPE_TEXTS: dict[torch.dtype, str] = {}  # repr of each dtype, made once (there are a few dozen)


def _dtype_text(dtype: torch.dtype) -> str:
    text = _DTYPE_TEXTS.get(dtype)
    if text is None:
        text = _DTYPE_TEXTS[dtype] = repr(dtype)
    return text


def _safe_repr(value: Any) -> str:
    """``repr(value)`` without addresses; a failing ``__repr__`` must not break the traced forward."""
    try:
        return sanitize_addresses(repr(value))
    except Exception as error:
        return f"<{type(value).__name__} object; repr() raised {type(error).__name__}: {error}>"


def _fits_safetensors(tensor: torch.Tensor) -> bool:
    """Whether a ``.safetensors`` file can hold ``tensor`` (not meta, sparse, complex128, quantized, ...)."""
    return tensor.dtype in _SAFETENSORS_DTYPES and tensor.layout == torch.strided and not tensor.is_meta


def json_keys(keys: list[Any]) -> list[str]:
    """The JSON object keys for ``keys`` (one dict's): as ``json.dumps`` writes them, made unique.

    ``1`` and ``"1"`` (or ``True`` and ``"true"``) would both be written as ``"1"``, and a reader
    keeps only the last; a later key that clashes gets its type added: ``"1 (int)"``.
    """
    if set(map(type, keys)) <= {str}:  # all strings (a call's kwargs): already unique
        return keys
    result: list[str] = []
    taken: set[str] = set()
    for key in keys:
        plain = key is None or isinstance(key, (str, int, float, bool))
        text = key_as_string(key) if plain else _safe_repr(key)
        if text in taken:
            base, count = f"{text} ({type(key).__name__})", 1
            text = base
            while text in taken:
                count += 1
                text = f"{base} {count}"
        taken.add(text)
        result.append(text)
    return result


def _not_recorded(value: Any, error: BaseException) -> str:
    """The placeholder of a value the debugger could not record, with the reason."""
    return sanitize_addresses(f"<{type(value).__name__} not recorded: {type(error).__name__}: {error}>")


class ValueSerializer:
    """Builds trace values for one thread of one debugger context.

    A value the debugger cannot record (a tensor whose ``repr`` or statistics raise, a nested or
    masked tensor, a list that contains itself, nesting deeper than ``MAX_VALUE_DEPTH``) becomes a
    placeholder string with the reason: the forward goes on as it would without the debugger.

    Args:
        use_repr (`bool`): record tensors as repr lines (True) or as `.safetensors` files (False).
        output_dir (`Path`): where `.safetensors` files go.
        names (`FileNameRegistry`): hands out unique, safe file names.
        tensors (`TensorSource`, *optional*): the tensor recorded for a value, and its placement
            over the ranks of a torch.distributed run; by default the value, or a DTensor's local shard.
    """

    def __init__(
        self, use_repr: bool, output_dir: Path, names: FileNameRegistry, tensors: TensorSource | None = None
    ):
        self._tensors = LocalTensors(with_placements=False) if tensors is None else tensors
        self._own_tensors = isinstance(self._tensors, LocalTensors)  # a plain tensor is recorded as it is
        self._use_repr = use_repr
        self._output_dir = output_dir
        self._names = names
        self._options: PrintOptions | None = None
        self._open_containers: set[int] = set()  # ids of the lists/dicts being serialized (cycles)
        # the statistics and tensor files of the current (or last) trace, done off the forward's thread
        self._background: BackgroundWork | None = None
        # the statistics of device tensors of the call being recorded, read by the host together
        self._device_batch = DeviceBatch()
        # the entries whose statistics are completed once the forward is over, by id (each entry is
        # kept alive here): computed off the forward's thread, or read with their call's
        self._pending: dict[int, tuple[TensorEntry, PendingStatistics | DevicePending]] = {}
        self._recent = RecentTensors()  # entries of the last tensors recorded, reused while unchanged
        self._shape_texts: dict[torch.Size, str] = {}  # see _shape_text; emptied with each trace
        self._all_statistics_off_thread = not use_repr  # see _statistics_off_thread; set for each trace

    @property
    def written_files(self) -> list[Path]:
        """The tensor files of the current (or last) trace, once the queued ones are written."""
        if self._background is None:
            return []
        self._background.wait()
        return self._background.written

    def start_trace(self) -> None:
        """Read the print options the reprs must follow (the context has just set them)."""
        self._options = PrintOptions.current()
        self._background = BackgroundWork()
        self._all_statistics_off_thread = not self._use_repr or core_left_free()
        make_buffers(2)  # the forward's thread and the worker reduce at once
        self._recent.clear()
        self._shape_texts.clear()

    def finish_trace(self) -> None:
        """Wait for the trace's background work, raise the first write error, and complete the entries."""
        if self._background is not None:
            self._background.wait()
            if self._background.error is not None:
                raise self._background.error
        for entry, pending in self._pending.values():
            reprs, entry.statistics = pending.result(self._options)
            entry.update(reprs)  # after "value", where upstream writes them
        self._pending.clear()

    def end_trace(self) -> None:
        """Forget the trace's state (but for ``written_files``, kept until the next trace starts)."""
        if self._background is not None:
            self._background.wait()
        self._pending.clear()
        self._open_containers.clear()
        self._recent.clear()

    def serialize(self, value: Any, stem: str, capture: Capture = Capture.NOW) -> Any:
        """Return the JSON-ready form of ``value`` (a call's inputs or outputs); ``stem`` names its files."""
        if self._background is not None:
            self._background.take_over()
        try:
            return self._serialize(value, stem, capture, 0)
        finally:
            self._device_batch.flush(self._options)
            if self._background is not None:  # the memory of tensors already written or reduced
                self._background.let_go_done()

    def _serialize(self, value: Any, stem: str, capture: Capture, depth: int) -> Any:
        if isinstance(value, (list, tuple, dict)):
            return self._serialize_container(value, stem, capture, depth)
        if value is None:  # what _safe_repr gives it, without asking the tensor source
            return "None"
        try:
            if type(value) is torch.Tensor and self._own_tensors:
                tensor, placement = value, None  # what LocalTensors.tensor gives, without its call
            else:
                tensor, placement = self._tensors.tensor(value)
            if tensor is None:
                return _safe_repr(value)
            file_name = None if self._use_repr else self._names.claim(stem)
            # A clone would lose requires_grad / grad_fn, which the repr shows: format those now;
            # so are tensors of a distributed run (a gathered one is freed once recorded).
            if (
                capture is Capture.NOW
                or placement is not None
                or tensor.requires_grad
                or tensor.grad_fn is not None
            ):
                return self._entry(tensor, stem, file_name, placement)
            version = _version(tensor)
            if version is None:  # without a version, changes would go unnoticed: keep a copy
                return _DeferredTensor(tensor.detach().clone(), None, stem, file_name)
            held = copy_on_write(tensor)  # costs a copy only if the model changes it in place
            if held is not None:
                return _DeferredTensor(held, None, stem, file_name)
            return _DeferredTensor(tensor, version, stem, file_name)
        except Exception as error:  # an odd tensor (subclass, nested, ...) must not break the forward
            return _not_recorded(value, error)

    def _serialize_container(self, value: Any, stem: str, capture: Capture, depth: int) -> Any:
        kind = type(value).__name__
        if depth >= MAX_VALUE_DEPTH:
            return f"<{kind} not recorded: nested deeper than {MAX_VALUE_DEPTH} levels>"
        if id(value) in self._open_containers:
            return f"<{kind} not recorded: it contains itself>"
        self._open_containers.add(id(value))
        try:
            # loops, not comprehensions (a frame each): this runs at every module call of the forward
            if isinstance(value, dict):
                items = list(value.items())
                serialized = {}
                for json_key, (key, item) in zip(
                    json_keys(list(map(itemgetter(0), items))), items, strict=True
                ):
                    serialized[json_key] = self._serialize(item, f"{stem}_{key}", capture, depth + 1)
                return serialized
            elements = []
            for index, item in enumerate(value):
                elements.append(self._serialize(item, f"{stem}_{index}", capture, depth + 1))
            return elements
        finally:
            self._open_containers.discard(id(value))

    def resolve(self, value: Any) -> Any:
        """Format the deferred tensors inside ``value`` (already formatted parts are kept)."""
        try:
            return self._resolve(value)
        finally:
            self._device_batch.flush(self._options)

    def _resolve(self, value: Any) -> Any:
        if type(value) is _DeferredTensor:
            if value.version is not None and value.tensor._version != value.version:
                warnings.warn(
                    f"{value.stem}: the tensor was modified in place after it was recorded; the trace shows "
                    "its modified values (trace with do_prune_layers=False to record it before that)",
                    stacklevel=2,
                )
            try:
                return self._entry(value.tensor, value.stem, value.file_name)
            except Exception as error:
                return _not_recorded(value.tensor, error)
        if isinstance(value, TensorEntry) or not isinstance(value, (list, dict)):
            return value
        if isinstance(value, list):
            return [self._resolve(item) for item in value]
        return {key: self._resolve(item) for key, item in value.items()}

    def _entry(
        self, tensor: torch.Tensor, stem: str, file_name: str | None, placement: dict | None = None
    ) -> TensorEntry:
        """The entry of ``tensor``; with ``file_name``, its file (upstream names it after ``stem``)."""
        if not self._tensors.keeps_records:  # a rank that only takes part in a gathered view's gathers
            return TensorEntry(shape=repr(tensor.shape), dtype=repr(tensor.dtype))
        entry = self._formatted_entry(tensor, stem, file_name)
        entry.placement = placement
        return entry

    def _formatted_entry(self, tensor: torch.Tensor, stem: str, file_name: str | None) -> TensorEntry:
        key = self._recent.key(tensor)
        recorded = self._recent.entry_of(tensor, key)
        if recorded is not None:  # the same tensor, byte for byte: its file gets a second name
            entry = recorded.copy()
            if file_name is not None and recorded.file_stem is not None:
                self._link(recorded["value"][2:], file_name)
                entry["value"], entry.file_stem = f"./{file_name}", stem
            if id(recorded) in self._pending:  # its statistics are still being computed
                self._pending[id(entry)] = (entry, self._pending[id(recorded)][1])
            return entry
        # everything that may raise for an odd tensor runs before its file is written
        entry = TensorEntry(shape=self._shape_text(tensor.shape), dtype=_dtype_text(tensor.dtype))
        threads = threads_off_thread(tensor) if self._statistics_off_thread(tensor) else None
        reprs = {}  # completed by finish_trace when pending
        if threads is None:
            if stays_on_device(tensor):
                self._pending[id(entry)] = (entry, self._device_batch.add(tensor))
            else:
                reprs, entry.statistics = tensor_statistics(tensor, self._options)
        snapshot = None
        if file_name is not None and _fits_safetensors(tensor):
            # queued before the statistics: the forward's thread computes the last tensor's (the
            # logits') at the end of the trace while the worker writes its file (BackgroundWork.wait)
            snapshot = self._write(file_name, tensor)
            entry["value"], entry.file_stem = f"./{file_name}", stem
        else:  # use_repr, or a tensor no safetensors file can hold: recorded as its repr lines
            entry["value"] = sanitize_addresses(tensor_repr(tensor, self._options)).splitlines()
        if threads is not None:
            self._pending[id(entry)] = (entry, self._background.statistics(tensor, threads, snapshot))
        entry.update(reprs)
        self._recent.remember(tensor, key, entry)
        return entry

    def _shape_text(self, shape: torch.Size) -> str:
        """``repr(shape)``, made once per shape in a trace (a trace records the same few shapes many times)."""
        try:
            text = self._shape_texts.get(shape)
        except TypeError:  # a symbolic size cannot be a key
            return repr(shape)
        if text is None:
            text = self._shape_texts[shape] = repr(shape)
        return text

    def _statistics_off_thread(self, tensor: torch.Tensor) -> bool:
        """Whether to queue ``tensor``'s statistics for the worker rather than compute them here.

        Every tensor's with ``use_repr=False`` (the worker writes the files anyway) or when torch
        runs on fewer threads than the process has cores (the worker then has a core of its own:
        the statistics run beside the forward's ops). Otherwise the worker shares the cores with
        torch's threads, and below ``WORKER_STATISTICS_FROM`` elements its job (a copy-on-write
        snapshot, a future, a wake-up, the GIL handed back and forth) costs the forward more than
        computing them on its thread does; the logits above it are the last tensor recorded,
        whose pass the forward's thread shares once it waits.
        """
        return self._all_statistics_off_thread or tensor.numel() >= WORKER_STATISTICS_FROM

    def _write(self, file_name: str, tensor: torch.Tensor) -> torch.Tensor | None:
        """Queue the file; return the unchanging copy it is written from (its statistics read it too)."""
        # Written on the queue's thread. A failed write must not break the model's forward: the
        # first error is raised once the forward is over (unless the model raised first), and no
        # further file is attempted.
        return self._background.write(self._output_dir / file_name, tensor)

    def _link(self, existing_name: str, file_name: str) -> None:
        """Give the file of ``existing_name`` a second name; its tensor is not written again."""
        self._background.link(self._output_dir / existing_name, self._output_dir / file_name)
