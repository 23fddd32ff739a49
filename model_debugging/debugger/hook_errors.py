"""Which module's forward hook raised an exception, read from its traceback.

``torch.nn.Module.__call__`` runs a module's forward hooks after its ``forward`` has returned,
outside the ``forward`` the debugger wraps: an exception a hook raises first meets the wrapper of
the module that called it. The traceback still holds the hooked module's ``Module._call_impl``
frame, whose ``self`` is that module and whose ``result`` is set once its ``forward`` returned
(a forward pre-hook raises before that: the module did not run, and has no call to mark).
"""

from __future__ import annotations

from torch import nn

_CALL_IMPL = nn.Module._call_impl.__code__


def forward_hook_raiser(exception: BaseException) -> nn.Module | None:
    """The module whose forward hook raised ``exception``, as far as its traceback tells (else None).

    The innermost module call in the traceback is the one that raised; it is reported when its
    ``forward`` had returned (with an output other than None).
    """
    innermost = None
    traceback = exception.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code is _CALL_IMPL:
            innermost = traceback.tb_frame
        traceback = traceback.tb_next
    if innermost is None:
        return None
    frame_locals = innermost.f_locals
    if frame_locals.get("result") is None:  # not run yet, or torch keeps it under another name
        return None
    module = frame_locals.get("self")
    return module if isinstance(module, nn.Module) else None
