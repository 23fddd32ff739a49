"""``debug_port``: the whole loop of checking a port in one call.

It traces the reference and the port on the same inputs (every layer, tensors in files), compares
the traces with compare's defaults, compares the outputs the two models returned, writes the
explorer page of the comparison, prints the verdict and returns it. Run it again after each fix.
In float16 or bfloat16, rounding grows through the layers of a correct port until it crosses any
fixed tolerance. So a reference in half precision is traced a second time as a float32 copy, and
each tensor is compared within a few times the reference's own rounding there (see
`model_debugging.compare.noise_floor`); the copy holds the parameters in float32, twice the memory of
the bfloat16 model's. Without it (``float32_noise=False``), when compare diverges in half precision
(and says so in a warning), replay's bisection (each module run on the reference's own inputs)
decides the verdict.

Example::

    from model_debugging import debug_port

    result = debug_port(reference_model, my_port, {"input_ids": input_ids})
    result.equivalent  # True once the port computes what the reference computes

The output directory (``debug_port`` by default) holds ``reference/`` and ``port/`` (the two
traces), ``reference_float32/`` (the float32 copy's trace, for a half-precision reference),
``comparison.json``, ``comparison.html`` and ``renames.yaml`` (the alignment as rename rules for
``model-debugging compare --config``), and the marker ``.debug_port``. A later run replaces them
in a directory with that marker; a directory without it that is not empty is refused rather than
overwritten (see `model_debugging.porting.output_dir`).
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import re
import shutil
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from model_debugging.compare.engine import compare_traces
from model_debugging.compare.noise_floor import allowance, largest_difference
from model_debugging.compare.numeric import scaled_atol
from model_debugging.compare.padding import only_at_padded_tokens, padded_tokens_of
from model_debugging.compare.rendering import render_terminal
from model_debugging.compare.result import TraceComparison
from model_debugging.compare.tolerance import DEFAULT_ATOL, DEFAULT_RTOL, ROUNDING_GROWS
from model_debugging.debugger.context import model_addition_debugger_context
from model_debugging.explorer.view import write_view
from model_debugging.porting.output_dir import (
    FLOAT32_NAME,
    PAGE_NAME,
    RENAMES_NAME,
    RESULT_NAME,
    output_dir_refusal,
    prepare_output_dir,
)
from model_debugging.replay.api import replay_trace
from model_debugging.replay.result import ReplayResult
from model_debugging.reporting.atomic import atomic_write_json, atomic_write_text

_HALF_PRECISION = (torch.float16, torch.bfloat16)


class DebugPortError(ValueError):
    """An unusable argument: an output directory holding files ``debug_port`` did not write (it is
    not overwritten), or a ``record_functions`` name the debugger does not know."""


@dataclass(frozen=True)
class PortCheck:
    """The result of :func:`debug_port`: the trace comparison, and the outputs the models returned.

    ``outputs_max_abs_diff`` is the largest difference between the first tensor each model
    returned (the logits, the last hidden state, ...); None when one returned no tensor or another
    shape (``outputs_note`` says which).
    """

    comparison: TraceComparison
    outputs_match: bool
    outputs_max_abs_diff: float | None
    outputs_note: str | None
    directory: Path
    replay: ReplayResult | None = None  # replay's bisection, run when compare's differences may be rounding

    @property
    def equivalent(self) -> bool:
        """Every compared call agrees and so do the outputs the models returned. These stand for
        the final outputs when the traces could not compare them (a tied LM head applied as
        ``x @ embed.weight.T`` in the port's forward is no call of its own). In float16 or bfloat16,
        when compare diverges, replay's bisection decides: no module wrong on the reference's own
        inputs means the differences are rounding grown through the layers."""
        if self.replay is not None:
            return self.replay.smallest_wrong is None
        return self.outputs_match and self.comparison.calls_agree

    @property
    def page(self) -> Path:
        return self.directory / PAGE_NAME

    def replay_line(self) -> str | None:
        if self.replay is None:
            return None
        if self.replay.smallest_wrong is None:
            return (
                "replay: no module is wrong on the reference's own inputs: compare's differences are "
                "half-precision rounding grown through the layers"
            )
        return f"replay: smallest module wrong on the reference's own inputs: {self.replay.smallest_wrong.module_path}"

    def summary_line(self) -> str:
        if self.outputs_note:
            return f"returned outputs: {self.outputs_note}"
        state = "equal within tolerance" if self.outputs_match else "DIFFER"
        line = f"returned outputs: {state} (max abs diff {self.outputs_max_abs_diff:.3g})"
        if self.comparison.final_output_note is not None:
            line += ": they are the final outputs the traces could not compare"
        return line


def _in_half_precision(model: nn.Module) -> bool:
    return any(
        tensor.dtype in _HALF_PRECISION for tensor in itertools.chain(model.parameters(), model.buffers())
    )


def _float32_copy(model: nn.Module) -> nn.Module:
    """A copy of ``model`` with its floating parameters and buffers in float32; ``model`` is untouched."""
    return copy.deepcopy(model).float()


def _upcast(inputs: Any) -> Any:
    """``inputs`` with float16/bfloat16 tensors in float32 (the same values), for the float32 copy."""
    if isinstance(inputs, torch.Tensor):
        return inputs.float() if inputs.dtype in _HALF_PRECISION else inputs
    if isinstance(inputs, Mapping):
        return {key: _upcast(value) for key, value in inputs.items()}
    if isinstance(inputs, (tuple, list)):  # called as model(*inputs): a tuple does
        return tuple(_upcast(value) for value in inputs)
    return inputs


def _noise_tolerance(
    expected: torch.Tensor | None, upcast: torch.Tensor | None, atol: float | None, rtol: float | None
) -> tuple[float, float] | None:
    """(atol, rtol) for the returned outputs from the reference's own rounding in them (see
    `model_debugging.compare.noise_floor`); None without a float32 output of the same shape."""
    if (
        expected is None
        or upcast is None
        or expected.shape != upcast.shape
        or not expected.is_floating_point()
    ):
        return None
    level = largest_difference(expected, upcast)
    return allowance(level, DEFAULT_ATOL if atol is None else atol, DEFAULT_RTOL if rtol is None else rtol)


def _call(model: nn.Module, inputs: Any) -> Any:
    if isinstance(inputs, Mapping):
        return model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    return model(inputs)


def _first_tensor(value: Any) -> torch.Tensor | None:
    """The first tensor in what a model returned (a tensor, a ModelOutput, a dict, a tuple, ...)."""
    if isinstance(value, torch.Tensor):
        return value
    items = (
        value.values() if isinstance(value, Mapping) else value if isinstance(value, (tuple, list)) else ()
    )
    return next((found for item in items if (found := _first_tensor(item)) is not None), None)


def _trace(
    model: nn.Module, inputs: Any, directory: Path, record_functions: Sequence[str]
) -> tuple[Any, str | None]:
    """What ``model`` returned, or why it returned nothing: a forward that raises is a finding
    (the trace records the call it went through), not a reason to stop."""
    with ExitStack() as stack:
        try:
            stack.enter_context(
                model_addition_debugger_context(
                    model,
                    debug_path=directory,
                    do_prune_layers=False,
                    use_repr=False,
                    record_functions=record_functions,
                )
            )
        except ValueError as error:  # an unknown record_functions name or an unusable directory
            raise DebugPortError(str(error)) from None
        try:
            return _call(model, inputs), None
        except Exception as error:  # the user's forward: what it raised is reported, as the trace shows
            return None, f"{type(error).__name__}: {error}"


def debug_port(
    reference: nn.Module,
    port: nn.Module,
    inputs: Any,
    *,
    port_inputs: Any = None,
    output_dir: str | os.PathLike = "debug_port",
    atol: float | None = None,
    rtol: float | None = None,
    boundaries: bool = False,
    ignore: Iterable[str | re.Pattern[str]] = (),
    record_functions: Sequence[str] = (),
    float32_noise: bool | None = None,
    verbose: bool = True,
) -> PortCheck:
    """Trace ``reference`` and ``port`` on ``inputs``, compare them, write the page, print the verdict.

    Args:
        reference (`torch.nn.Module`): the model the port must reproduce (in eval mode, with its weights).
        port (`torch.nn.Module`): the port, with the converted weights.
        inputs: what the models are called with: a dict (``model(**inputs)``), a tuple or list
            (``model(*inputs)``) or a single value (``model(inputs)``).
        port_inputs (*optional*): the port's inputs when its signature differs; defaults to ``inputs``.
        output_dir (`str` or `os.PathLike`, *optional*, defaults to `"debug_port"`): where the traces,
            ``comparison.json`` and ``comparison.html`` go (see the module docstring).
        atol, rtol (`float`, *optional*): the tolerances of compare and of the returned outputs; by
            default compare's choice (``1e-5`` and ``1e-4``, or derived from the dtype for float16
            and bfloat16 traces: see `model_debugging.compare.tolerance`).
        boundaries (`bool`, *optional*, defaults to `False`): compare block boundaries only (see
            `model_debugging.compare.boundaries`).
        ignore (*optional*): regular expressions silencing calls on one side only.
        record_functions (*optional*): functions to record in both models, e.g.
            ``["torch.nn.functional.gelu"]`` (see `model_addition_debugger_context`).
        float32_noise (`bool`, *optional*): trace a float32 copy of ``reference`` too and compare each
            tensor within a few times the reference's own rounding there. It costs the copy's
            parameters in float32 (twice a bfloat16 reference's) while it runs; ``reference``
            itself is left as it was. Defaults to on when ``reference`` holds float16 or bfloat16
            parameters or buffers.
        verbose (`bool`, *optional*, defaults to `True`): print compare's report and the outputs' line.

    Returns:
        `PortCheck`: ``.equivalent``, ``.comparison`` (a `TraceComparison`: ``divergence_origin``, ...),
        the returned outputs' difference and ``.page``.

    Raises:
        DebugPortError: ``output_dir`` holds files this function did not write, a
            ``record_functions`` name is unknown, or ``float32_noise=True`` for a reference without
            float16/bfloat16 parameters or buffers.
        ValueError: a negative tolerance.
    """
    if (atol is not None and atol < 0) or (rtol is not None and rtol < 0):
        raise ValueError(f"tolerances must be >= 0, got atol={atol}, rtol={rtol}")
    half_precision = _in_half_precision(reference)
    if float32_noise and not half_precision:
        raise DebugPortError(
            "float32_noise=True: the reference holds no float16 or bfloat16 parameter or buffer to compare with float32"
        )
    directory = Path(output_dir)
    if refusal := output_dir_refusal(directory):
        raise DebugPortError(refusal)
    prepare_output_dir(directory)
    expected, reference_error = _trace(reference, inputs, directory / "reference", record_functions)
    upcast, upcast_error, noise = None, None, None
    if (half_precision if float32_noise is None else float32_noise) and reference_error is None:
        try:
            upcast_model = _float32_copy(reference)
        # what deepcopy raises for an attribute it cannot copy, or the device when out of memory
        except (TypeError, RuntimeError) as error:
            upcast_error = f"{type(error).__name__} when copied: {error}"
        else:
            upcast, upcast_error = _trace(
                upcast_model, _upcast(inputs), directory / FLOAT32_NAME, record_functions
            )
            del upcast_model  # its memory back before the port runs
        noise = None if upcast_error else directory / FLOAT32_NAME
    actual, port_error = _trace(
        port, inputs if port_inputs is None else port_inputs, directory / "port", record_functions
    )
    comparison = compare_traces(
        directory / "reference",
        directory / "port",
        atol=atol,
        rtol=rtol,
        boundaries=boundaries,
        ignore=ignore,
        noise_from=noise,
    )
    if reference_error or port_error:
        raised = f"the {'reference' if reference_error else 'port'} raised {reference_error or port_error}"
        check = PortCheck(comparison, False, None, f"{raised}: not compared", directory)
    else:
        padded = padded_tokens_of(inputs.get("attention_mask")) if isinstance(inputs, Mapping) else None
        check = _checked(
            comparison,
            _first_tensor(expected),
            _first_tensor(actual),
            padded,
            directory,
            _noise_tolerance(_first_tensor(expected), _first_tensor(upcast), atol, rtol),
        )
        # compare warns when half-precision rounding, grown through the layers, may explain where it diverges
        if any(ROUNDING_GROWS in warning for warning in comparison.warnings):
            bisection = replay_trace(directory / "reference", port, bisect=True, comparison=comparison)
            check = replace(check, replay=bisection)
    atomic_write_json(
        directory / RESULT_NAME,
        {
            **comparison.to_dict(),
            "equivalent": check.equivalent,  # the verdict printed: the returned outputs included
            "outputs_match": check.outputs_match,
            "outputs_max_abs_diff": check.outputs_max_abs_diff,
            "replay_smallest_wrong": (
                None
                if check.replay is None or check.replay.smallest_wrong is None
                else check.replay.smallest_wrong.module_path
            ),
        },
    )
    write_view(directory / "reference", check.page, compare=directory / "port", comparison=comparison)
    if comparison.alignment is not None:
        atomic_write_text(directory / RENAMES_NAME, comparison.alignment.rename_rules_yaml)
    if verbose:
        width = shutil.get_terminal_size().columns
        lines = [
            check.summary_line(),
            *([check.replay_line()] if check.replay is not None else []),
            *(
                [f"the float32 copy of the reference raised {upcast_error}: no noise floor"]
                if upcast_error
                else []
            ),
            f"page: {check.page}",
            f"rename rules of the alignment: {directory / RENAMES_NAME}",
            f"verdict: {'EQUIVALENT' if check.equivalent else 'NOT EQUIVALENT'}",
        ]
        print(render_terminal(comparison, width, rules=False))
        print(
            "\n".join(
                wrapped for line in lines for wrapped in textwrap.wrap(line, width, subsequent_indent="    ")
            )
        )
    return check


def _checked(
    comparison: TraceComparison,
    expected: torch.Tensor | None,
    actual: torch.Tensor | None,
    padded: torch.Tensor | None,
    directory: Path,
    tolerance: tuple[float, float] | None,
) -> PortCheck:
    """The returned outputs compared within tolerance (``tolerance``, (atol, rtol), when the float32
    copy's outputs measured the reference's own rounding; else compare's); differences only at the
    tokens ``padded`` marks (the model's ``attention_mask`` pads them) are not counted (see
    ``compare/padding.py``)."""
    if expected is None or actual is None:
        note = f"the {'reference' if expected is None else 'port'} returned no tensor: not compared"
        return PortCheck(comparison, False, None, note, directory)
    if expected.shape != actual.shape:
        note = f"DIFFER: shape {list(expected.shape)} vs {list(actual.shape)}"
        return PortCheck(comparison, False, None, note, directory)
    expected, actual = expected.detach().double(), actual.detach().double()
    difference = (actual - expected).abs()
    largest = float(difference.max()) if difference.numel() else 0.0
    largest = largest if math.isfinite(largest) else math.inf
    atol, rtol = tolerance or (
        scaled_atol(expected, comparison.atol, comparison.atol_per_rms),
        comparison.rtol,
    )
    close = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all() and padded is not None and only_at_padded_tokens(~close.cpu(), padded):
        note = f"equal within tolerance at every real token (max abs diff {largest:.3g} at padded tokens, not counted)"
        return PortCheck(comparison, True, largest, note, directory)
    return PortCheck(comparison, bool(close.all()), largest, None, directory)
