"""Recording steps that run eagerly when the model they record is compiled (``torch.compile``).

Dynamo traces into whatever a compiled forward calls, the debugger's wrappers included: traced,
the recording steps printed statistics in another format than an eager run
(``tensor(6.075309283914976e-05)`` for upstream's ``tensor(6.0753e-05)``), recorded some tensors
as their repr string, and cost seconds of compilation and pages of Dynamo warnings. Run eagerly,
they record what an eager run records (upstream's files byte for byte), and the model's own code
stays compiled between them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TypeVar

import torch

try:
    from torch._C._dynamo.eval_frame import get_eval_frame_callback
except ImportError:  # a torch built without Dynamo: nothing is ever compiled

    def get_eval_frame_callback() -> None:
        return None


_Step = TypeVar("_Step", bound=Callable)


def eager_when_compiled(step: _Step) -> _Step:
    """``step`` itself, run outside Dynamo while a compiled call runs on this thread.

    The check costs one C call (about 0.1 µs) per step of an eager forward, and importing Dynamo
    (seconds) is left to the first compiled call. Dynamo does not trace the wrapper: it calls it
    as it is (a graph break), as it does any function marked with ``_torchdynamo_disable``.
    """

    @functools.wraps(step)
    def run(*args, **kwargs):
        if get_eval_frame_callback() is None:  # no compiled call is running: the usual case
            return step(*args, **kwargs)
        return _disabled(step)(*args, **kwargs)

    run._torchdynamo_disable = True  # type: ignore[attr-defined]  # with skip_code below: torch's own skip()
    return run  # type: ignore[return-value]


_WRAPPER_CODE = eager_when_compiled(lambda: None).__code__  # every wrapper runs this code


def keep_dynamo_out_of_the_wrappers() -> None:
    """Make Dynamo, once it is loaded (a model compiled, transformers imported), never trace the wrappers.

    Dynamo is not imported for this: that costs seconds, and a process that has not loaded it
    compiles nothing yet.
    """
    if "torch._dynamo" not in sys.modules:
        return
    try:
        from torch._dynamo.eval_frame import skip_code
    except ImportError:  # a torch that keeps it elsewhere: Dynamo then traces the wrappers, which still
        return  # run each step eagerly (the records are right; compiling takes longer and warns)
    skip_code(_WRAPPER_CODE)


@functools.cache
def _disabled(step: Callable) -> Callable:
    return torch.compiler.disable(step)
