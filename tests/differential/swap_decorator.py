"""Run a real transformers model with our `capture_outputs` in place of transformers' own.

A decorated ``forward`` is a chain of wrappers (``functools.wraps`` links them by ``__wrapped__``).
Inside the chain, transformers' capture wrapper is found by its code object; the wrapper above it
(or the class attribute, when it is the outermost) is pointed at our decorator applied to the same
inner function with the same ``tie_last_hidden_states``. Everything is put back on exit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn
from transformers.utils import output_capturing as upstream

from model_debugging.output_capturing import capture_outputs

UPSTREAM_WRAPPER_CODE = upstream.capture_outputs(lambda self: None).__code__


def _closure(function) -> dict:
    return dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=True))


@contextmanager
def our_capture_outputs(model: nn.Module) -> Iterator[int]:
    """Swap the decorator in every class of ``model`` that uses transformers'; yields how many were swapped."""
    undo = []
    try:
        for cls in {type(module) for module in model.modules()}:
            above, function = None, cls.forward
            while function is not None and function.__code__ is not UPSTREAM_WRAPPER_CODE:
                above, function = function, getattr(function, "__wrapped__", None)
            if function is None:
                continue
            cells = _closure(function)
            ours = capture_outputs(
                cells["func"].cell_contents,
                tie_last_hidden_states=cells["tie_last_hidden_states"].cell_contents,
            )
            if above is None:
                cls.forward = ours
                undo.append(lambda cls=cls, function=function: setattr(cls, "forward", function))
            else:
                cell = _closure(above)["func"]
                cell.cell_contents = ours
                undo.append(lambda cell=cell, function=function: setattr(cell, "cell_contents", function))
        yield len(undo)
    finally:
        for step in reversed(undo):
            step()
