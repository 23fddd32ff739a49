"""Tracing helpers for replay tests: a trace replay can read, and ports that share the reference's weights."""

import copy

from model_debugging import model_addition_debugger_context

ATTENTION_FUNCTIONS = ["apply_rotary_pos_emb", "eager_attention_forward"]


def trace(model, directory, input_ids, **options):
    """Trace one forward without layer pruning, tensors in files, as replay needs."""
    with model_addition_debugger_context(
        model, debug_path=str(directory), do_prune_layers=False, use_repr=False, **options
    ):
        model(input_ids, use_cache=False)
    return directory


def port_of(model, *changes):
    """A copy of ``model`` (same weights) with each change applied in turn."""
    port = copy.deepcopy(model)
    for change in changes:
        port = change(port)
    return port
