"""``model_addition_debugger_context``: trace every module call of a model's forward passes."""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch
from torch import nn

from model_debugging.debugger.distributed import NoFiles, RankSetup, check_ranks, rank_setup
from model_debugging.debugger.eager import keep_dynamo_out_of_the_wrappers
from model_debugging.debugger.forward_patches import ForwardPatches
from model_debugging.debugger.function_records import FunctionRecorder
from model_debugging.debugger.hook_errors import hook_raiser
from model_debugging.debugger.prune import paths_with_later_siblings
from model_debugging.debugger.recursion import recursion_headroom
from model_debugging.debugger.single_thread import one_intra_op_thread
from model_debugging.debugger.tensors import MAX_VALUE_DEPTH, ValueSerializer
from model_debugging.debugger.trace_format.names import FileNameRegistry, TracePaths
from model_debugging.debugger.trace_format.writing import TraceWriter, move_aside_older_trace
from model_debugging.debugger.tracer import CallSite, CallTracer, Hooked, qualified_class_name

logger = logging.getLogger(__name__)

# upstream prints tensors in scientific notation on 120-column lines
_TRACE_PRINT_OPTIONS = {"sci_mode": True, "linewidth": 120}


def _usable_output_dir(debug_path: str | bytes | os.PathLike | None, output_dir: Path) -> Path:
    """Create ``output_dir`` (``debug_path``, or a rank's directory in it) if needed and check a file can
    be written there, before any forward runs."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=output_dir):
            pass
    except (OSError, ValueError) as error:  # ValueError: a NUL character in the path
        reason = error
        if output_dir.is_symlink() and not output_dir.exists():  # mkdir says only "File exists"
            reason = f"it is a symbolic link to {os.readlink(output_dir)!r}, which does not exist"
        elif output_dir.exists() and not output_dir.is_dir():  # likewise
            reason = "it is a file, not a directory"
        raise ValueError(f"debug_path={debug_path!r} is not a usable directory: {reason}") from error
    return output_dir


class _TracingSession:
    """Everything one context installs on a model, and takes away again.

    Each thread that runs a top-level forward inside the context gets its own tracer, so calls
    from several threads are recorded as separate traces, never mixed in one tree.
    """

    def __init__(
        self,
        model: nn.Module,
        setup: RankSetup,
        prune_layers: bool,
        use_repr: bool,
        record_functions: Sequence[str] = (),
        only_modules: re.Pattern[str] | None = None,
    ):
        self._model = model
        self._class_name = type(model).__name__
        self._model_class = qualified_class_name(model)
        self._setup = setup
        self._output_dir = output_dir = setup.output_dir
        self._recording = setup.records
        self._only_modules = only_modules
        named_modules = list(model.named_modules())
        self._modules = self._recorded_modules(named_modules)
        self._prune_layers = prune_layers
        self._use_repr = use_repr
        self._patches = ForwardPatches()
        self._installed = False
        self._threads = threading.local()
        self._tracers: list[CallTracer] = []
        self._tracers_lock = threading.Lock()
        depth = max(name.count(".") + 1 for name, _ in named_modules)
        # a frame per module level for the wrappers, plus the recording stack at the deepest call
        self._extra_frames = 2 * depth + 2 * MAX_VALUE_DEPTH + 200
        self._root_site = CallSite(self._class_name, self._model_class)
        if self._recording:
            self._names = FileNameRegistry()
            self._likely_pruned = (
                paths_with_later_siblings(named_modules, self._class_name) if prune_layers else frozenset()
            )
            self._writer = TraceWriter(output_dir, self._class_name, setup.run) if setup.writes else NoFiles()
        self._functions = (
            FunctionRecorder(model, record_functions, self._function_call) if record_functions else None
        )

    def install(self) -> None:
        if self._recording:
            for name, module in self._modules:
                if name:
                    # what next(module.children(), None) tells, without a generator per module
                    has_submodules = len(module._modules) > list(module._modules.values()).count(None)
                    site = CallSite(
                        f"{self._class_name}.{name}",
                        qualified_class_name(module),
                        has_submodules=has_submodules,
                        likely_pruned=self._likely_pruned,
                    )
                    self._patches.patch(module, self._submodule_forward(site))
        self._patches.patch(self._model, self._top_level_forward)
        if self._functions is not None and self._recording:
            self._functions.install()
        self._installed = True

    def _recorded_modules(self, modules: list[tuple[str, nn.Module]]) -> list[tuple[str, nn.Module]]:
        """The named modules to record (of the model's ``modules``): all, or with ``only_modules``
        those whose path (or an enclosing module's) matches it."""
        if self._only_modules is None:
            return modules
        chosen = {
            name for name, _ in modules if name and self._only_modules.search(f"{self._class_name}.{name}")
        }
        kept = [
            (name, module)
            for name, module in modules
            if name in chosen or any(name.startswith(f"{other}.") for other in chosen)
        ]
        if not kept:
            raise ValueError(
                f"only_modules={self._only_modules.pattern!r} matches no module path of {self._class_name} "
                f"(e.g. {self._class_name}.{modules[-1][0]})"
            )
        return kept

    def uninstall(self) -> None:
        self._installed = False
        self._patches.undo()
        if self._functions is not None:
            self._functions.uninstall()
        with self._tracers_lock:
            for tracer in self._tracers:
                tracer.reset()

    def _thread_tracer(self) -> CallTracer:
        tracer = getattr(self._threads, "tracer", None)
        if tracer is None:
            serializer = ValueSerializer(self._use_repr, self._output_dir, self._names, self._setup.tensors)
            tracer = self._threads.tracer = CallTracer(serializer, self._prune_layers)
            with self._tracers_lock:
                self._tracers.append(tracer)
        return tracer

    def _submodule_forward(self, site: CallSite) -> Callable[[Callable], Callable]:
        def make_forward(original: Callable) -> Callable:
            @functools.wraps(original)
            def traced_forward(*args, **kwargs):
                return self._recorded_call(site, original, args, kwargs)

            return traced_forward

        return make_forward

    def _function_call(
        self, name: str, qualified: str, call: Callable[[], Any], args: tuple, kwargs: dict
    ) -> Any:
        """Record a call of a function chosen by ``record_functions`` as a child of the running module."""
        tracer = getattr(self._threads, "tracer", None)
        path = f"{tracer.current_path}.{name}" if tracer is not None and tracer.recording else name
        return self._recorded_call(CallSite(path, function=qualified), lambda *_, **__: call(), args, kwargs)

    def _recorded_call(self, site: CallSite, original: Callable, args: tuple, kwargs: dict) -> Any:
        tracer = getattr(self._threads, "tracer", None)
        if tracer is None or not tracer.in_forward:
            if site.function is None and self._installed and self._recording:
                # a submodule run on its own (the encoder ``generate`` runs before the first forward):
                # recorded as a trace of its own, rooted at that submodule
                with torch.no_grad(), recursion_headroom(self._extra_frames), self._function_mode():
                    return self._traced_call(self._thread_tracer(), original, args, kwargs, site)
            return original(*args, **kwargs)  # outside a traced top-level forward of this thread
        if not self._installed or tracer.failure is not None:
            return original(*args, **kwargs)
        # the steps of _record, written out: this runs at every module call
        try:
            with _ONE_INTRA_OP_THREAD:
                call = tracer.enter(site, args, kwargs)
        except Exception as error:
            tracer.failure = error
            return original(*args, **kwargs)
        try:
            output = original(*args, **kwargs)
        except BaseException as error:
            _record(tracer, tracer.exit_with_exception, call, error, self._hooked_path(tracer, error))
            raise
        if tracer.failure is None:
            try:
                with _ONE_INTRA_OP_THREAD:
                    tracer.exit(call, output)
            except Exception as error:
                tracer.failure = error
        return output

    def _hooked_path(self, tracer: CallTracer, error: BaseException) -> Hooked | None:
        """The module path of the recorded module whose forward hook or pre-hook raised ``error``
        (else None); not looked for once ``tracer`` recorded ``error`` on an inner call (each outer
        call it passes through would look again, for nothing)."""
        if tracer.recorded(error):
            return None
        raiser = hook_raiser(error)
        if raiser is None:
            return None
        path = next((name for name, m in self._modules if m is raiser.module and name), None)
        return None if path is None else Hooked(f"{self._class_name}.{path}", raiser.pre_hook)

    def _top_level_forward(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def traced_forward(*args, **kwargs):
            if not self._installed or not self._recording or self._thread_tracer().in_forward:
                with torch.no_grad():
                    return original(*args, **kwargs)
            with torch.no_grad(), recursion_headroom(self._extra_frames), self._function_mode():
                return self._traced_call(self._thread_tracer(), original, args, kwargs, self._root_site)

        return traced_forward

    def _function_mode(self) -> AbstractContextManager:
        return self._functions.torch_mode() if self._functions is not None else nullcontext()

    def _traced_call(
        self,
        tracer: CallTracer,
        original: Callable,
        args: tuple,
        kwargs: dict,
        root: CallSite,
    ) -> Any:
        paths = self._writer.begin()
        try:
            try:
                with one_intra_op_thread():
                    tracer.start(root, args, kwargs)
            except Exception as error:
                tracer.failure = error
                return original(*args, **kwargs)
            try:
                output = original(*args, **kwargs)
            except BaseException as error:
                self._write_partial_trace(tracer, paths, error)
                raise
            if tracer.failure is None:
                try:
                    with one_intra_op_thread():
                        self._writer.write(paths, tracer.finish(output), tracer.written_files)
                except OSError:
                    self._writer.abandon(paths, tracer.written_files)
                    raise  # the disk or directory failed: the user must know, once the forward is over
                except Exception as error:
                    tracer.failure = error
            return output
        finally:
            if tracer.failure is not None:
                self._give_up(tracer, paths)
            tracer.reset()

    def _give_up(self, tracer: CallTracer, paths: TracePaths) -> None:
        """Remove the files of a trace the debugger could not record; the forward itself went on."""
        error = tracer.failure
        self._writer.abandon(paths, tracer.written_files)
        logger.warning(
            "The debugger could not record this forward (%s: %s); its trace files were removed",
            type(error).__name__,
            error,
        )

    def _write_partial_trace(self, tracer: CallTracer, paths: TracePaths, error: BaseException) -> None:
        if tracer.failure is not None:
            return  # given up in the finally clause above
        try:
            with one_intra_op_thread():
                tree = tracer.finish_with_exception(error, self._hooked_path(tracer, error))
                self._writer.write(paths, tree, tracer.written_files)
        except Exception as write_error:  # never hide the model's own exception
            self._writer.abandon(paths, tracer.written_files)
            logger.warning("The partial trace of the failed forward could not be written: %s", write_error)
        else:
            if not self._setup.writes:
                return
            logger.warning(
                "The forward raised %s; partial trace written to %s", type(error).__name__, paths.summary
            )


_ONE_INTRA_OP_THREAD = one_intra_op_thread()  # taken once: entered twice per module call


def _record(tracer: CallTracer, step: Callable, *args: Any) -> Any:
    """Run one recording step; a failure stops recording this forward (the forward itself goes on)."""
    if tracer.failure is not None:
        return None
    try:
        with _ONE_INTRA_OP_THREAD:
            return step(*args)
    except Exception as error:
        tracer.failure = error
        return None


def _module_pattern(only_modules: str | None) -> re.Pattern[str] | None:
    if only_modules is None:
        return None
    try:
        return re.compile(only_modules)
    except (re.error, TypeError) as error:
        raise ValueError(f"only_modules={only_modules!r} is not a regular expression: {error}") from None


@contextmanager
def model_addition_debugger_context(
    model: nn.Module,
    debug_path: str | bytes | os.PathLike | None = None,
    do_prune_layers: bool = True,
    use_repr: bool = True,
    record_functions: Sequence[str] = (),
    ranks: str = "0",
    only_modules: str | None = None,
) -> Iterator[nn.Module]:
    """Trace every module call of the forward passes run inside the context.

    Each top-level forward writes a nested call tree to ``<ModelClass>_debug_tree_FULL_TENSORS.json``
    (tensors as repr lines, or as paths of `.safetensors` files) and ``..._SUMMARY.json`` (the same
    without values); later forwards in the same context write ``<ModelClass>_debug_tree_2_...`` and
    so on. A submodule called on its own, outside any forward of the model (the encoder run that
    ``generate`` makes before the first decoder step), is recorded the same way, as a trace rooted
    at that submodule. The forwards run under ``torch.no_grad()``. On exit the model is exactly as before (also
    if a forward raised; a partial trace is then written) and torch's print options are restored.
    Under ``torch.distributed`` only rank 0 records and writes, unless ``ranks`` asks for more.

    Args:
        model (`torch.nn.Module`): the model to trace.
        debug_path (`str`, `bytes` or `os.PathLike`, *optional*, defaults to `None`): output directory
            (created if missing; the current directory when None; a relative path is taken from the
            directory current at entry). An unusable path raises `ValueError` at once.
        do_prune_layers (`bool`, *optional*, defaults to `True`): keep only the first and last block
            of each run of numbered layers (``layers.0`` ... ``layers.N``).
        use_repr (`bool`, *optional*, defaults to `True`): record tensors as their printed repr; when
            False, write each tensor to its own `.safetensors` file (key ``data``) and record its path.
        record_functions (`Sequence[str]`, *optional*, defaults to `()`): functions whose calls are
            recorded as children of the module running them: torch functions by full name
            (``"torch.nn.functional.scaled_dot_product_attention"``) or bare names of Python helpers
            in the modules defining the model's classes (``"apply_rotary_pos_emb"``); see
            `model_debugging.debugger.function_records`. An unknown name raises `ValueError` at once.
        ranks (`str`, *optional*, defaults to `"0"`): under ``torch.distributed``, ``"0"``: rank 0
            records its own tensors (a DTensor as its local shard), as upstream; ``"all"``: every rank
            records its own tensors into ``<debug_path>/rank<N>``; ``"gathered"``: rank 0 writes the
            logical tensors, gathered from every rank (every rank must enter the context and run the
            same forward). See `model_debugging.debugger.distributed`.
        only_modules (`str`, *optional*, defaults to `None`): a regular expression; when given, only
            the calls of modules whose path (``LlamaForCausalLM.model.layers.3.mlp``) it matches (as
            `re.search` does), and of the modules inside them, are recorded besides the model's own
            call: for models whose tensors are too large to record, or gather, whole. A pattern that
            matches no module raises `ValueError` at once.

    Returns:
        The model, for use as ``with model_addition_debugger_context(model) as traced: traced(**inputs)``.

    Example:
        ```python
        with model_addition_debugger_context(model, debug_path="debug", do_prune_layers=False):
            model(**inputs)
        ```
    """
    setup = rank_setup(check_ranks(ranks), debug_path)
    session = _TracingSession(
        model, setup, do_prune_layers, use_repr, record_functions, _module_pattern(only_modules)
    )
    if setup.writes:
        _usable_output_dir(debug_path, setup.output_dir)
        moved_to = move_aside_older_trace(setup.output_dir, type(model).__name__)
        if moved_to is not None:
            logger.warning("An older trace of %s was moved to %s", type(model).__name__, moved_to)
    keep_dynamo_out_of_the_wrappers()
    saved_print_options = torch._tensor_str.get_printoptions()
    try:
        session.install()
        torch.set_printoptions(**_TRACE_PRINT_OPTIONS)
        yield model
    finally:
        session.uninstall()
        torch.set_printoptions(**saved_print_options)
