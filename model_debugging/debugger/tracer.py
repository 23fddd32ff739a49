"""Recording the nested call tree of one top-level forward.

The tracer keeps a stack of open calls. Each call's inputs are serialized when it starts and,
for modules without submodules, its outputs when it ends. With layer pruning, a numbered call
that has a higher-numbered sibling and starts after a first layer block will most likely be a
middle block, so its tensors are kept unformatted (see :mod:`.prune`, :mod:`.tensors`) and
formatted only once it is known to stay in the tree; any other call is formatted at once (should it be pruned after
all, its entries, and with ``use_repr=False`` its files, are dropped). A call that raises keeps
the exception's type and message; only the innermost call that saw an exception records it (or its
child whose forward hook raised it, see :mod:`.hook_errors`; a child whose forward pre-hook raised
it never ran, so the call that called it records it with that child's path). A call
that changed some of its input tensors in place lists their paths (see :mod:`.input_versions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch

from model_debugging.debugger.eager import eager_when_compiled
from model_debugging.debugger.input_versions import InputVersions
from model_debugging.debugger.prune import ChildCalls, block_infix
from model_debugging.debugger.tensors import Capture, ValueSerializer, sanitize_addresses
from model_debugging.debugger.trace_format.names import (
    EXCEPTION_KEY,
    FORWARD_PRE_HOOK_KEY,
    FUNCTION_KEY,
    INPUTS_MODIFIED_KEY,
    MODULE_CLASS_KEY,
)

_NO_OUTPUT = object()


class Hooked(NamedTuple):
    """The module path of a recorded module whose hook raised, and whether it was a forward pre-hook."""

    path: str
    pre_hook: bool


def qualified_class_name(instance: object) -> str:
    """``instance``'s class as ``<Python module>.<qualname>``, the value of a node's ``module_class``."""
    cls = type(instance)
    return f"{cls.__module__}.{cls.__qualname__}"


class CallSite:
    """What every call of one module (or of one recorded function at one place) records alike,
    worked out once: its path, class, the stems of its tensor files and what pruning needs."""

    __slots__ = (
        "module_path",
        "module_class",
        "function",
        "has_submodules",
        "inputs_stem",
        "first_arg_stem",
        "outputs_stem",
        "block_infix",
        "likely_pruned",
    )

    def __init__(
        self,
        module_path: str,
        module_class: str | None = None,
        function: str | None = None,
        has_submodules: bool = False,
        likely_pruned: frozenset[str] = frozenset(),
    ):
        self.module_path = module_path
        self.module_class = module_class
        self.function = function  # the qualified name, for a recorded function call
        self.has_submodules = has_submodules  # upstream records no outputs for such a module
        self.inputs_stem = f"{module_path}_inputs"
        self.first_arg_stem = f"{module_path}_inputs_args_0"  # what the serializer names args[0]
        self.outputs_stem = f"{module_path}_outputs"
        self.block_infix = block_infix(module_path)  # see prune.block_infix
        self.likely_pruned = module_path in likely_pruned  # see prune.paths_with_later_siblings


@dataclass(eq=False)
class CallRecord:
    """One module or function call in the tree (``outputs`` stays ``_NO_OUTPUT`` when it raised)."""

    module_path: str
    inputs: Any
    children: list[CallRecord] = field(default_factory=list)
    outputs: Any = _NO_OUTPUT
    exception: dict | None = None
    function: str | None = None  # the qualified name, for a recorded function call
    module_class: str | None = None  # see qualified_class_name, for a module call
    inputs_modified: list[str] = field(default_factory=list)  # the inputs it changed in place

    @property
    def module_children(self) -> list[CallRecord]:
        """The children upstream's debugger records too: module calls, not function records."""
        return [child for child in self.children if child.function is None]

    def to_json(self) -> dict:
        """The node as :mod:`.trace_format.extra` splits it: upstream's keys, then ours, then ``children``.

        ``outputs`` are present on calls without module children, as upstream has them (function
        records inside a leaf module do not change what upstream's files hold).
        """
        node = {"module_path": self.module_path, "inputs": self.inputs}
        if self.outputs is not _NO_OUTPUT and not self.module_children:
            node["outputs"] = self.outputs
        if self.module_class is not None:
            node[MODULE_CLASS_KEY] = self.module_class
        if self.function is not None:
            node[FUNCTION_KEY] = self.function
        if self.exception is not None:
            node[EXCEPTION_KEY] = self.exception
        if self.inputs_modified:
            node[INPUTS_MODIFIED_KEY] = self.inputs_modified
        if self.children:
            node["children"] = [child.to_json() for child in self.children]
        return node


class _OpenCall:
    __slots__ = ("record", "site", "children", "capture", "defers_alone", "versions")

    def __init__(
        self,
        record: CallRecord,
        site: CallSite,
        prune_layers: bool,
        capture: Capture,
        defers_alone: bool,
        versions: InputVersions,
    ):
        self.record = record
        self.site = site
        self.children = ChildCalls(prune_layers)
        self.capture = capture  # how tensors recorded in this call are kept until formatted
        self.defers_alone = defers_alone  # the outermost deferred call
        self.versions = versions  # its input tensors' version counters at entry


class CallTracer:
    """Builds the call tree of one top-level forward at a time.

    Args:
        serializer (`ValueSerializer`): turns inputs/outputs into trace values.
        prune_layers (`bool`): keep only the first and last block of each run of numbered layers.
    """

    def __init__(self, serializer: ValueSerializer, prune_layers: bool):
        self._serializer = serializer
        self._prune_layers = prune_layers
        self._stack: list[_OpenCall] = []
        self._attributed_exception: BaseException | None = None
        self.failure: Exception | None = None  # why recording the current forward stopped

    @property
    def in_forward(self) -> bool:
        """A top-level forward of this tracer is running."""
        return bool(self._stack)

    @property
    def recording(self) -> bool:
        """Module calls are being recorded: in a forward, and no recording step has failed."""
        return bool(self._stack) and self.failure is None

    @property
    def current_path(self) -> str:
        """The module path of the innermost open call."""
        return self._stack[-1].record.module_path

    @property
    def written_files(self) -> list[Path]:
        """The tensor files of the current (or last) trace."""
        return self._serializer.written_files

    @eager_when_compiled
    def start(self, site: CallSite, args: tuple, kwargs: dict) -> None:
        """Open the root call; unlike submodules, its inputs always have both ``args`` and ``kwargs``."""
        self._serializer.start_trace()
        given = {"args": args, "kwargs": kwargs}
        inputs = self._serializer.serialize(given, site.inputs_stem)
        record = CallRecord(site.module_path, inputs, module_class=site.module_class)
        self._stack.append(
            _OpenCall(record, site, self._prune_layers, Capture.NOW, False, InputVersions(given))
        )

    @eager_when_compiled
    def enter(self, site: CallSite, args: tuple, kwargs: dict) -> _OpenCall:
        stack = self._stack
        parent = stack[-1]
        if self._prune_layers and len(stack) > 1 and site.function is None:
            stack[-2].children.drop_block_before(parent.record.module_path)
        capture = parent.capture
        # a block followed by a higher-numbered sibling will most likely be pruned: keep its tensors
        # unformatted; any other one most likely stays, so it is formatted now (no copy to hold)
        if capture is Capture.NOW and site.likely_pruned and parent.children.may_be_pruned(site.module_path):
            capture = Capture.REFERENCE
        if not kwargs and len(args) == 1 and type(args[0]) is torch.Tensor:
            # most calls (a norm, a projection, an activation): what the general case below gives
            # for ``{"args": (tensor,)}``, without walking the dict and the tuple
            inputs = {"args": [self._serializer.serialize(args[0], site.first_arg_stem, capture)]}
            versions = InputVersions.of_tensor("args.0", args[0])
        else:
            given = {}  # upstream omits empty args and kwargs
            if args:
                given["args"] = args
            if kwargs:
                given["kwargs"] = kwargs
            inputs = self._serializer.serialize(given, site.inputs_stem, capture)
            versions = InputVersions(given)
        defers_alone = capture is not Capture.NOW and parent.capture is Capture.NOW
        record = CallRecord(site.module_path, inputs, function=site.function, module_class=site.module_class)
        call = _OpenCall(record, site, self._prune_layers, capture, defers_alone, versions)
        stack.append(call)
        return call

    @eager_when_compiled
    def exit(self, call: _OpenCall, output: Any = _NO_OUTPUT) -> None:
        """Close ``call``; ``output`` is recorded for modules without submodules (None for the others)."""
        self._close(call)
        record = call.record
        site = call.site
        module_children = record.module_children if record.children else []  # most calls are leaves
        if not module_children and output is not _NO_OUTPUT:
            if site.has_submodules:
                record.outputs = None  # upstream records no outputs for modules with submodules
            else:
                record.outputs = self._serializer.serialize(output, site.outputs_stem, call.capture)
        child_paths = [child.module_path for child in module_children] if module_children else []
        kept = self._stack[-1].children.add(record, child_paths, site.block_infix)
        if kept and call.defers_alone:
            self._resolve(record)

    @eager_when_compiled
    def exit_with_exception(
        self, call: _OpenCall, exception: BaseException, hooked: Hooked | None = None
    ) -> None:
        """Close ``call``, through which ``exception`` passed; ``hooked`` names a module it called
        whose forward hook or pre-hook raised it (see :mod:`.hook_errors`)."""
        self._attribute(call, exception, hooked)
        self.exit(call)

    @eager_when_compiled
    def finish(self, output: Any = _NO_OUTPUT) -> dict:
        """Close the root call and return the finished tree as JSON-ready data."""
        root = self._stack[-1]
        self._close(root)
        record = root.record
        if not record.module_children and output is not _NO_OUTPUT:
            outputs = self._serializer.serialize(output, root.site.outputs_stem)
            if outputs:  # upstream drops empty top-level entries
                record.outputs = outputs
        tree = record.to_json()
        self._serializer.finish_trace()
        self.reset()
        return tree

    @eager_when_compiled
    def finish_with_exception(self, exception: BaseException, hooked: Hooked | None = None) -> dict:
        """Close every call still open (innermost first) after ``exception`` and return the partial
        tree (``hooked``: see :meth:`exit_with_exception`)."""
        while len(self._stack) > 1:
            self.exit_with_exception(self._stack[-1], exception)
        self._attribute(self._stack[-1], exception, hooked)
        return self.finish()

    def reset(self) -> None:
        self._stack.clear()
        self._attributed_exception = None
        self.failure = None
        self._serializer.end_trace()

    def recorded(self, exception: BaseException) -> bool:
        """Whether ``exception`` is already recorded on a call of this trace."""
        return self._attributed_exception is exception

    def _attribute(self, call: _OpenCall, exception: BaseException, hooked: Hooked | None) -> None:
        """Record ``exception`` on the first (innermost) call it propagates through, or on that call's
        last child of ``hooked.path``, whose forward hook raised it after its forward returned. A
        forward pre-hook's raised before its module ran: ``call`` records it, naming that module."""
        if not self.recorded(exception):
            self._attributed_exception = exception
            record = call.record
            if hooked is not None and not hooked.pre_hook:
                record = next(
                    (
                        child
                        for child in reversed(call.children.records)
                        if child.module_path == hooked.path and child.function is None
                    ),
                    record,
                )
            record.exception = {
                "type": type(exception).__name__,
                "message": sanitize_addresses(str(exception)),
            }
            if hooked is not None and hooked.pre_hook:
                record.exception[FORWARD_PRE_HOOK_KEY] = hooked.path

    def _close(self, call: _OpenCall) -> None:
        if self._stack and self._stack[-1] is call:
            self._stack.pop()
        call.record.inputs_modified = call.versions.modified()
        last_block = call.children.take_last_block()
        if last_block is not None and call.capture is Capture.NOW:
            self._resolve(last_block)
        call.record.children = call.children.records

    def _resolve(self, record: CallRecord) -> None:
        record.inputs = self._serializer.resolve(record.inputs)
        if record.outputs is not _NO_OUTPUT:
            record.outputs = self._serializer.resolve(record.outputs)
        for child in record.children:
            self._resolve(child)
