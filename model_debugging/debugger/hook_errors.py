"""Which module's forward hook or forward pre-hook raised an exception, read from its traceback.

``torch.nn.Module.__call__`` runs a module's forward pre-hooks before its ``forward`` and its
forward hooks after ``forward`` returned, both outside the ``forward`` the debugger wraps: an
exception a hook raises first meets the wrapper of the module that called it. The traceback still
holds the hooked module's ``Module._call_impl`` frame, whose ``self`` is that module and whose
``result`` is set once its ``forward`` returned. A pre-hook raises before that: the traceback's
next frame after the one running the hooks (``_call_impl`` or the ``inner`` function torch runs
them in) is the code of the pre-hook torch was calling (its loop variable ``hook``), or that frame
raised itself (a pre-hook's return value torch refuses). The module did not run then, so upstream's
trace has no call of it; the calling module's call names it (see ``tracer.CallTracer``).
"""

from __future__ import annotations

import functools
from types import CodeType, TracebackType
from typing import NamedTuple

from torch import nn
from torch.nn.modules.module import _global_forward_pre_hooks

_CALL_IMPL = nn.Module._call_impl.__code__


class HookRaiser(NamedTuple):
    """The module whose hook raised, and whether it was a forward pre-hook (its forward did not run)."""

    module: nn.Module
    pre_hook: bool


def hook_raiser(exception: BaseException) -> HookRaiser | None:
    """The module whose forward hook or forward pre-hook raised ``exception``, as far as its traceback
    tells (else None).

    The innermost module call in the traceback is the one looked at: a forward hook's when its
    ``forward`` had returned (with an output other than None), a pre-hook's when the frame running
    the hooks was calling one (or refused what one returned) before ``forward`` ran.
    """
    innermost: TracebackType | None = None
    traceback = exception.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code is _CALL_IMPL:
            innermost = traceback
        traceback = traceback.tb_next
    if innermost is None:
        return None
    frame_locals = innermost.tb_frame.f_locals
    module = frame_locals.get("self")
    if not isinstance(module, nn.Module):
        return None
    if frame_locals.get("result") is not None:  # else not run yet, or torch keeps it under another name
        return HookRaiser(module, pre_hook=False)
    running = innermost
    if running.tb_next is not None and running.tb_next.tb_frame.f_code.co_name == "inner":
        running = running.tb_next  # torch >= 2.4 runs the hooks in a nested function
    return HookRaiser(module, pre_hook=True) if _in_pre_hook(running, module) else None


def _in_pre_hook(running: TracebackType, module: nn.Module) -> bool:
    """Whether the frame of ``running`` raised while calling one of ``module``'s forward pre-hooks."""
    hook = running.tb_frame.f_locals.get("hook")
    if hook is None or not any(hook is other for other in _pre_hooks(module)):
        return False
    if running.tb_next is None:  # raised in torch's own loop: what the pre-hook returned was refused
        return True
    return running.tb_next.tb_frame.f_code is _code_of(hook)


def _pre_hooks(module: nn.Module) -> list:
    return [*_global_forward_pre_hooks.values(), *module._forward_pre_hooks.values()]


def _code_of(hook: object) -> CodeType | None:
    """The code a call of ``hook`` runs first: a function's, a bound method's, a ``partial``'s
    function's, a callable object's ``__call__``'s (None for a builtin: no frame tells it)."""
    while isinstance(hook, functools.partial):
        hook = hook.func
    function = getattr(hook, "__func__", hook)
    code = getattr(function, "__code__", None)
    if code is None and not isinstance(hook, type):  # a callable object: its class's __call__
        call = next((vars(cls)["__call__"] for cls in type(hook).__mro__ if "__call__" in vars(cls)), None)
        code = getattr(call, "__code__", None)
    return code
