"""Replay on the hand-written ports of ``tests/ports``, as a porter runs it: trace the port, compare,
then replay (and bisect) with compare's alignment and the port's argument adapters.

:data:`BUG_PLACES` says where each planted bug is, as a module path of the reference relative to
the model (``""``: the model's own forward): the module whose own code holds it. Compare names the
same places (one exception below).
"""

from __future__ import annotations

import collections
import copy
from pathlib import Path

import torch

from model_debugging import ReplayResult, compare_traces, replay_trace
from tests.ports import Style
from tests.ports.catalog import trace
from tests.replay.port_adapters import ADAPTERS

BUG_PLACES = {
    "gemma": {
        "ROPE_CONVENTION": "model.layers.0.self_attn",  # every layer's attention; bisection stops at the first
        "ROPE_SIGN": "model.layers.0.self_attn",
        "SWAPPED_FUSED_HALVES": "model.layers.1.mlp.gate_proj",  # its part of the fused gate/up projection
        "MASK_OFF_BY_ONE": {Style.PLAIN: "", Style.KEYWORDS: "model"},  # where the port makes its mask
        "MISSING_ONE_PLUS_W": "model.layers.1.post_attention_layernorm",
        "RESIDUAL_FROM_NORMED": "model.layers.1",
        "MISSING_FEED_FORWARD_RESIDUAL": "model.layers.0",  # after its last recorded call: its end
        "ATTENTION_OUTPUT_HALVED": "model.layers.0.self_attn",  # likewise
        "MLP_OUTPUT_SCALED": "model.layers.0.mlp",  # after its last recorded call, its layer's last call
    },
    "t5": {
        "SWAPPED_FUSED_HALVES": "decoder.block.1.layer.2.DenseReluDense.wi_0",
        "SWAPPED_CROSS_KV": "decoder.block.1.layer.1.EncDecAttention.k",
        # the plain port's decoder makes its causal mask, the keyword port's model does: compare names
        # the decoder for both, whose inputs it cannot compare (a boolean mask against none)
        "MASK_OFF_BY_ONE": {Style.PLAIN: "decoder", Style.KEYWORDS: ""},
        "ATTENTION_SCALE": "encoder.block.0.layer.0.SelfAttention",
        "NORM_SUBTRACTS_MEAN": "decoder.block.1.layer.1.layer_norm",
        "RESIDUAL_FROM_NORMED": "decoder.block.1",
        # after its last recorded call, inside the reference's T5LayerFF (the port has no such module)
        "FEED_FORWARD_OUTPUT_HALVED": "encoder.block.0.layer.1.DenseReluDense",
    },
    "vit": {
        "SWAPPED_FUSED_HALVES": "vit.layers.1.attention.q_proj",
        "PATCH_ORDER": "vit.embeddings.patch_embeddings.projection",  # a Conv2d against unfold + Linear
        # the plain port's block holds the attention and MLP code itself
        "ATTENTION_SCALE": {Style.PLAIN: "vit.layers.0", Style.KEYWORDS: "vit.layers.0.attention"},
        "GELU_TANH": {Style.PLAIN: "vit.layers.0", Style.KEYWORDS: "vit.layers.0.mlp"},
        "NORM_WITHOUT_BIAS": "vit.layers.1.layernorm_after",
        "RESIDUAL_FROM_NORMED": "vit.layers.1",
    },
}


def bug_cases(name: str) -> list[tuple[Style, str]]:
    """Each bug in one style, the styles taking turns (both where the bug sits elsewhere in each): the
    whole matrix takes too long for the suite."""
    cases = []
    for index, (bug, place) in enumerate(BUG_PLACES[name].items()):
        styles = list(Style) if isinstance(place, dict) else [list(Style)[index % 2]]
        cases += [(style, bug) for style in styles]
    return cases


def bug_place(name: str, style: Style, bug: str) -> str:
    place = BUG_PLACES[name][bug]
    return place[style] if isinstance(place, dict) else place


class PortSession:
    """One architecture's reference trace, and its ports traced and compared as a porter does."""

    def __init__(self, architecture, directory: Path):
        self.architecture = architecture
        self.directory = directory
        self.reference = architecture.reference()
        self.inputs = architecture.inputs()
        self.trace = trace(self.reference, directory / "reference", self.inputs)

    def reference_trace_in(self, dtype: torch.dtype) -> Path:
        directory = self.directory / f"reference_{dtype}".replace("torch.", "")
        if not directory.exists():
            trace(copy.deepcopy(self.reference).to(dtype), directory, self.inputs)
        return directory

    def replay(
        self,
        style: Style,
        bug: str = "NONE",
        dtype: torch.dtype | None = None,
        adapted: bool = True,
        compared: bool = True,
        **options,
    ) -> ReplayResult:
        """Replay the port (``adapted``: with its porter's argument adapters; ``compared``: with compare's
        alignment of the port's trace) on the reference's trace."""
        port = self.architecture.port(self.reference, style, self.architecture.Bug[bug])
        comparison = None
        if compared:
            port_trace = trace(port, self.directory / f"{style.value}_{bug}", self.inputs)
            comparison = compare_traces(self.trace, port_trace)
        if dtype is not None:
            # replayed in dtype, aligned through the float32 port's trace, and judged against the
            # reference's own spread between float32 and dtype
            port = port.to(dtype)
            options["noise_from"] = self.reference_trace_in(dtype)
        name = self.architecture.__name__.rpartition(".")[2]
        adapters = ADAPTERS[(name, style)] if adapted else None
        return replay_trace(self.trace, port, comparison=comparison, adapters=adapters, **options)


def verdict_counts(result: ReplayResult) -> collections.Counter:
    return collections.Counter(call.verdict for call in result.modules)


def full_path(result: ReplayResult, relative: str) -> str:
    root = result.modules[0].module_path.partition(".")[0]
    return f"{root}.{relative}" if relative else root


def check_forgotten_call(result: ReplayResult, root: str, skipped: str, receiver: str) -> None:
    """Bisection stops at the model, and its conclusion names first the reference's call ``skipped``
    (a norm the port forgets) as what made the input of ``receiver``, skipped by the port."""
    assert result.bug_in == root
    reason = result.smallest_wrong.reason
    assert reason.startswith(
        "its recorded submodules and functions are correct on identical inputs: the bug is in its own "
        f"code: {root}.{skipped} (no counterpart in the candidate) made what {root}.{receiver} receives"
    ), reason
    assert (
        f"received what {root}.{skipped} was given: the port skips it; or else before {receiver} " in reason
    )
