"""``model_addition_debugger_context``: trace every module call of a model's forward passes."""

from __future__ import annotations

import functools
import logging
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import nn

from model_debugging.debugger.prune import paths_with_later_siblings
from model_debugging.debugger.tensors import ValueSerializer
from model_debugging.debugger.trace_format.names import FileNameRegistry
from model_debugging.debugger.trace_format.writing import TraceWriter
from model_debugging.debugger.tracer import CallTracer

logger = logging.getLogger(__name__)

_NOT_SET = object()
# upstream prints tensors in scientific notation on 120-column lines
_TRACE_PRINT_OPTIONS = {"sci_mode": True, "linewidth": 120}


def _is_recording_rank() -> bool:
    """Rank 0 records; so does a process that is not part of an initialized process group."""
    distributed = torch.distributed
    return not (distributed.is_available() and distributed.is_initialized() and distributed.get_rank() != 0)


def _usable_output_dir(debug_path: str | Path | None) -> Path:
    """Create ``debug_path`` if needed and check a file can be written there, before any forward runs."""
    try:
        output_dir = Path(debug_path) if debug_path else Path(".")
        output_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=output_dir):
            pass
    except (OSError, TypeError) as error:
        raise ValueError(f"debug_path={debug_path!r} is not a usable directory: {error}") from error
    return output_dir


class _ForwardPatches:
    """Per-instance ``forward`` replacements that can be undone exactly."""

    def __init__(self) -> None:
        self._patched: list[tuple[nn.Module, object]] = []

    def patch(self, module: nn.Module, make_forward: Callable[[Callable], Callable]) -> None:
        own_forward = module.__dict__.get("forward", _NOT_SET)
        module.__dict__["forward"] = make_forward(module.forward)
        self._patched.append((module, own_forward))

    def undo(self) -> None:
        for module, own_forward in reversed(self._patched):
            if own_forward is _NOT_SET:
                module.__dict__.pop("forward", None)
            else:
                module.__dict__["forward"] = own_forward
        self._patched.clear()


class _TracingSession:
    """Everything one context installs on a model, and takes away again."""

    def __init__(self, model: nn.Module, output_dir: Path | None, prune_layers: bool, use_repr: bool):
        self._model = model
        self._class_name = type(model).__name__
        self._recording = output_dir is not None
        self._patches = _ForwardPatches()
        if self._recording:
            serializer = ValueSerializer(use_repr, output_dir, FileNameRegistry())
            likely_pruned = (
                paths_with_later_siblings(model, self._class_name) if prune_layers else frozenset()
            )
            self._tracer = CallTracer(serializer, prune_layers, likely_pruned)
            self._writer = TraceWriter(output_dir, self._class_name)

    def install(self) -> None:
        if self._recording:
            for name, module in self._model.named_modules():
                if name:
                    has_submodules = next(module.children(), None) is not None
                    self._patches.patch(
                        module, self._submodule_forward(f"{self._class_name}.{name}", has_submodules)
                    )
        self._patches.patch(self._model, self._top_level_forward)

    def uninstall(self) -> None:
        self._patches.undo()
        if self._recording:
            self._tracer.reset()

    def _submodule_forward(self, module_path: str, has_submodules: bool) -> Callable[[Callable], Callable]:
        tracer = self._tracer

        def make_forward(original: Callable) -> Callable:
            @functools.wraps(original)
            def traced_forward(*args, **kwargs):
                if not tracer.active:  # called outside a traced top-level forward
                    return original(*args, **kwargs)
                call = tracer.enter(module_path, args, kwargs)
                try:
                    output = original(*args, **kwargs)
                except BaseException as error:
                    tracer.exit_with_exception(call, error)
                    raise
                tracer.exit(call, output, has_submodules=has_submodules)
                return output

            return traced_forward

        return make_forward

    def _top_level_forward(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def traced_forward(*args, **kwargs):
            if not self._recording or self._tracer.active:
                with torch.no_grad():
                    return original(*args, **kwargs)
            try:
                with torch.no_grad():
                    self._tracer.start(self._class_name, args, kwargs)
                    try:
                        output = original(*args, **kwargs)
                    except BaseException as error:
                        self._write_partial_trace(error)
                        raise
                    tree = self._tracer.finish(output)
            finally:
                self._tracer.reset()
            self._writer.write(tree)
            return output

        return traced_forward

    def _write_partial_trace(self, error: BaseException) -> None:
        try:
            paths = self._writer.write(self._tracer.finish_with_exception(error))
        except Exception as write_error:  # never hide the model's own exception
            logger.warning("The partial trace of the failed forward could not be written: %s", write_error)
        else:
            logger.warning(
                "The forward raised %s; partial trace written to %s", type(error).__name__, paths.summary
            )


@contextmanager
def model_addition_debugger_context(
    model: nn.Module,
    debug_path: str | Path | None = None,
    do_prune_layers: bool = True,
    use_repr: bool = True,
) -> Iterator[nn.Module]:
    """Trace every module call of the forward passes run inside the context.

    Each top-level forward writes a nested call tree to ``<ModelClass>_debug_tree_FULL_TENSORS.json``
    (tensors as repr lines, or as paths of `.safetensors` files) and ``..._SUMMARY.json`` (the same
    without values); later forwards in the same context write ``<ModelClass>_debug_tree_2_...`` and
    so on. The forwards run under ``torch.no_grad()``. On exit the model is exactly as before (also
    if a forward raised; a partial trace is then written) and torch's print options are restored.
    Under ``torch.distributed`` only rank 0 records and writes.

    Args:
        model (`torch.nn.Module`): the model to trace.
        debug_path (`str` or `Path`, *optional*, defaults to `None`): output directory (created if
            missing; the current directory when None). An unusable path raises `ValueError` at once.
        do_prune_layers (`bool`, *optional*, defaults to `True`): keep only the first and last block
            of each run of numbered layers (``layers.0`` ... ``layers.N``).
        use_repr (`bool`, *optional*, defaults to `True`): record tensors as their printed repr; when
            False, write each tensor to its own `.safetensors` file (key ``data``) and record its path.

    Returns:
        The model, for use as ``with model_addition_debugger_context(model) as traced: traced(**inputs)``.

    Example:
        ```python
        with model_addition_debugger_context(model, debug_path="debug", do_prune_layers=False):
            model(**inputs)
        ```
    """
    recording = _is_recording_rank()
    output_dir = _usable_output_dir(debug_path) if recording else None
    saved_print_options = torch._tensor_str.get_printoptions()
    session = _TracingSession(model, output_dir, do_prune_layers, use_repr)
    try:
        session.install()
        torch.set_printoptions(**_TRACE_PRINT_OPTIONS)
        yield model
    finally:
        session.uninstall()
        torch.set_printoptions(**saved_print_options)
