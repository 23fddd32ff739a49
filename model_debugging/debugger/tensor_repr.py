"""Fast, byte-identical ``repr`` of tensors for the trace.

``repr(tensor)`` in torch runs a small torch op for every printed element (the formatter
checks each value with tensor ops) and indexes the tensor slice by slice, which costs
0.3-1 ms per tensor. The trace needs hundreds of reprs, so this module rebuilds the same
text from one ``tolist()`` of the printed elements: the edges of each dimension when the
tensor is summarized, every element otherwise. Anything the fast path does not cover
(subclasses, sparse/quantized/nested layouts, complex and exotic dtypes, empty tensors,
``sci_mode`` not forced) goes to torch's own ``repr``, so the text is always torch's.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import torch

_FAST_DTYPES = frozenset(
    {
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.bool,
    }
)
_PREFIX = "tensor("


@dataclass(frozen=True)
class PrintOptions:
    """The torch print options a repr depends on, read once per trace."""

    precision: int
    threshold: float
    edgeitems: int
    linewidth: int
    sci_mode: bool | None

    @classmethod
    def current(cls) -> PrintOptions:
        return cls(**torch._tensor_str.get_printoptions())


def _fast_path_applies(tensor: torch.Tensor, options: PrintOptions) -> bool:
    return (
        type(tensor) is torch.Tensor
        and options.sci_mode is True
        and options.edgeitems > 0
        and tensor.dtype in _FAST_DTYPES
        and tensor.layout == torch.strided
        and (tensor.is_cpu or tensor.is_cuda)
        and tensor.numel() > 0
        and not tensor.is_quantized
        and not tensor.is_nested
        and not tensor.is_neg()
        and not tensor._is_zerotensor()
        and not torch._C._functorch.is_functorch_wrapped_tensor(tensor)
    )


def _needs_suffix(tensor: torch.Tensor) -> bool:
    """True when torch appends ``device=``/``dtype=``/grad suffixes after the values."""
    return (
        not tensor.is_cpu
        or torch._C._get_default_device() != "cpu"
        or tensor.dtype not in (torch.get_default_dtype(), torch.int64, torch.bool)
        or tensor.requires_grad
        or tensor.grad_fn is not None
    )


def _format_elements(values: list, floating: bool, precision: int) -> tuple[list[str], int]:
    """Each value as torch's ``_Formatter`` prints it, and the width torch lays rows out with."""
    # map() and comprehensions, not generators: a trace formats thousands of elements
    if not floating:
        texts = list(map(str, values))
        width = max(map(len, texts))
        return list(map(str.rjust, texts, itertools.repeat(width))), width
    # the usual case, every value finite and non-zero, told by two scans in C (a float64 sum of
    # float32-range values cannot overflow; a float64 tensor's may, and takes the loop below)
    if 0.0 not in values and math.isfinite(sum(values)):
        texts = list(map(format, values, itertools.repeat(f".{precision}e")))
        width = max(map(len, texts))
        return list(map(str.rjust, texts, itertools.repeat(width))), width
    finite = [value != 0 and math.isfinite(value) for value in values]  # finite and non-zero
    if any(finite):
        texts = list(map(format, values, itertools.repeat(f".{precision}e")))
        width = max(map(len, itertools.compress(texts, finite)))
    else:  # no finite non-zero value: torch drops scientific notation and keeps width 1
        texts = [
            f"{value:.0f}" if math.isinf(value) or math.isnan(value) else f"{value:.0f}." for value in values
        ]
        width = 1
    return list(map(str.rjust, texts, itertools.repeat(width))), width


def _scalar_text(value: float | int | bool, floating: bool, precision: int) -> str:
    """``_format_elements([value], floating, precision)[0][0]``: one value alone sets its own width."""
    if not floating:
        return str(value)
    if value != 0 and math.isfinite(value):
        return format(value, f".{precision}e")
    return f"{value:.0f}" if math.isinf(value) or math.isnan(value) else f"{value:.0f}."


class _Layout:
    """Torch's nesting of rows, line wrapping and ``...`` markers, over pre-formatted elements."""

    def __init__(self, sizes: tuple[int, ...], summarize: bool, edge: int, linewidth: int, width: int):
        self._sizes = sizes
        self._summarize = summarize
        self._edge = edge
        self._linewidth = linewidth
        self._element_length = width + 2

    def render(self, level: int, indent: int) -> str:
        """The text of the rows from ``level`` on, with ``{}`` for each element."""
        size = self._sizes[level]
        cut = self._summarize and size > 2 * self._edge
        count = 2 * self._edge if cut else size
        remaining = len(self._sizes) - level
        if remaining == 1:
            per_line = max(1, math.floor((self._linewidth - indent) / self._element_length))
            items = ["{}"] * count
            if cut:
                items.insert(self._edge, " ...")
            lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
            return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
        slices = [self.render(level + 1, indent + 1) for _ in range(count)]
        if cut:
            slices.insert(self._edge, "...")
        return "[" + ("," + "\n" * (remaining - 1) + " " * (indent + 1)).join(slices) + "]"


@functools.lru_cache(maxsize=256)
def _template(sizes: tuple[int, ...], summarize: bool, edge: int, linewidth: int, width: int) -> str:
    """The layout of a tensor's text with ``{}`` for each element: the same for every tensor of
    one shape and element width (a trace prints many), so made once for them."""
    return _Layout(sizes, summarize, edge, linewidth, width).render(0, len(_PREFIX))


def _printed_elements(tensor: torch.Tensor, summarize: bool, edge: int) -> torch.Tensor:
    """The elements torch prints: first/last ``edge`` of each long dimension when summarizing."""
    if not summarize:
        return tensor
    # the longest dimension first: each selection copies, and cutting the logits' 32000 columns
    # before their 256 rows keeps the copies a few KiB instead of six rows of 32000
    cut = sorted((size, dim) for dim, size in enumerate(tensor.shape) if size > 2 * edge)
    for size, dim in reversed(cut):
        tensor = tensor.index_select(dim, _edge_index(size, edge, tensor.device))
    return tensor


@functools.lru_cache(maxsize=64)
def _edge_index(size: int, edge: int, device: torch.device) -> torch.Tensor:
    """The positions of the first and last ``edge`` of ``size`` elements (shared: never written to)."""
    return torch.cat((torch.arange(edge), torch.arange(size - edge, size))).to(device)


def _contents(tensor: torch.Tensor, options: PrintOptions) -> str:
    floating = tensor.dtype.is_floating_point
    if tensor.dim() == 0:
        return _scalar_text(tensor.item(), floating, options.precision)
    summarize = tensor.numel() > options.threshold
    # flattened in torch, in the order torch prints them
    values = _printed_elements(tensor, summarize, options.edgeitems).reshape(-1).tolist()
    texts, width = _format_elements(values, floating, options.precision)
    layout = _template(tuple(tensor.shape), summarize, options.edgeitems, options.linewidth, width)
    return layout.format(*texts)


def tensor_repr(tensor: torch.Tensor, options: PrintOptions) -> str:
    """Return exactly ``repr(tensor)`` under ``options`` (which must be torch's current ones)."""
    if not _fast_path_applies(tensor, options):
        return repr(tensor)
    contents = _contents(tensor, options)
    if _needs_suffix(tensor):
        return torch.Tensor.__repr__(tensor, tensor_contents=contents)
    return _PREFIX + contents + ")"


def value_reprs(values: list[float], like: torch.Tensor, options: PrintOptions) -> list[str]:
    """``repr`` of 0-dim tensors of ``like``'s dtype and device holding ``values`` (read from such tensors).

    Printed from the numbers already on the host, without making the tensors; ``like`` must not
    require grad (the statistics of a detached tensor).
    """
    if not _fast_path_applies(like, options):
        return [repr(scalar) for scalar in torch.tensor(values, dtype=like.dtype, device=like.device)]
    floating, precision = like.dtype.is_floating_point, options.precision
    texts = [_scalar_text(value, floating, precision) for value in values]
    if not _needs_suffix(like):
        return [_PREFIX + text + ")" for text in texts]
    scalar = like.new_empty(())  # only its dtype and device are printed, in the suffix
    return [torch.Tensor.__repr__(scalar, tensor_contents=text) for text in texts]


def scalar_reprs(scalars: list[torch.Tensor], options: PrintOptions) -> list[str]:
    """``repr`` of several 0-dim tensors of one dtype, with a single device-to-host copy."""
    first = scalars[0]
    if not _fast_path_applies(first, options):
        return [repr(scalar) for scalar in scalars]
    floating = first.dtype.is_floating_point
    reprs = []
    for scalar, value in zip(scalars, torch.stack(scalars).tolist(), strict=True):
        contents = _scalar_text(value, floating, options.precision)
        if _needs_suffix(scalar):
            reprs.append(torch.Tensor.__repr__(scalar, tensor_contents=contents))
        else:
            reprs.append(_PREFIX + contents + ")")
    return reprs
