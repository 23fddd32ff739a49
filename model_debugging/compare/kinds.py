"""What a call is, from its module class or recorded function: a norm, a projection, an activation, ...

Two calls whose kinds are both known and differ never pair: a norm is never taken for a projection
of the same shapes, and a norm is never part of a fused projection. A kind is read from the last
part of the class name (``GemmaRMSNorm``, ``torch.nn.modules.linear.Linear``) or of the function's
name (``torch.nn.functional.gelu``); a class the patterns below do not recognise (``Block``,
``MyAttention``) has no kind and pairs by shapes and values alone, as do calls of traces that do
not record classes (upstream's).
"""

from __future__ import annotations

import re

from model_debugging.debugger.trace_format.records import TraceNode

# (kind, pattern searched in the class name); the first match wins, so "RotaryEmbedding" is rotary
_CLASS_KINDS = (
    ("rotary", re.compile(r"Rotary|RoPE|Rope", re.IGNORECASE)),
    ("norm", re.compile(r"Norm")),
    ("dropout", re.compile(r"Dropout")),
    ("projection", re.compile(r"^(Linear|Conv[123]d|Conv1D|LazyLinear|.*Linear)$")),
    ("embedding", re.compile(r"Embedding")),
    (
        "activation",
        re.compile(r"GELU|SiLU|ReLU|Swish|Mish|Tanh|Sigmoid|Softplus|Activation|QuickGelu", re.IGNORECASE),
    ),
    ("attention", re.compile(r"Attention")),
)
_FUNCTION_KINDS = (
    ("activation", re.compile(r"^(gelu|silu|relu|relu6|leaky_relu|mish|tanh|sigmoid|softplus|elu|selu|hardswish|quick_gelu)$")),
    ("norm", re.compile(r"norm$")),
    ("projection", re.compile(r"^(linear|conv[123]d)$")),
    ("dropout", re.compile(r"dropout")),
    ("embedding", re.compile(r"^embedding$")),
    ("rotary", re.compile(r"rotary|rope", re.IGNORECASE)),
)  # fmt: skip


def kind_of(node: TraceNode) -> str | None:
    """The kind of ``node``'s call, or None when neither its class nor its function tells."""
    if node.function:
        name = node.function.rsplit(".", 1)[-1]
        return next((kind for kind, pattern in _FUNCTION_KINDS if pattern.search(name)), None)
    if node.module_class:
        name = node.module_class.rsplit(".", 1)[-1]
        return next((kind for kind, pattern in _CLASS_KINDS if pattern.search(name)), None)
    return None


def compatible_kinds(left: str | None, right: str | None) -> bool:
    """Whether calls of these kinds may compute the same thing (an unknown kind may be anything)."""
    return left is None or right is None or left == right
