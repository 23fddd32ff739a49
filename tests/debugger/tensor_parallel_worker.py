"""One rank of the tensor-parallel debugger tests (run by test_tensor_parallel.py, not collected by pytest).

Loads a saved tiny Llama with ``from_pretrained(path, tp_plan="auto")`` (gloo on CPU) and traces it
with ``ranks="gathered"``: correct, with one rank's shard of a projection scaled, and with the
reduction of one ``o_proj`` left out; then with ``ranks="all"``, correct and with the scaled shard.
Rank 0 also traces the unsharded model as the reference.

Usage: python tensor_parallel_worker.py RANK WORLD_SIZE INIT_FILE MODEL_DIR OUTPUT_ROOT
"""

import contextlib
import os
import sys
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from transformers import LlamaForCausalLM

from model_debugging import model_addition_debugger_context

# the planted bugs: the last rank's shard of this colwise projection is scaled ...
SCALED_SHARD = "model.layers.0.mlp.gate_proj"
# ... and this rowwise projection's partial sums are never reduced
UNREDUCED = "model.layers.1.self_attn.o_proj"
TRACE_OPTIONS = {"use_repr": False, "do_prune_layers": False}


@contextlib.contextmanager
def scaled_shard(model, rank: int, world_size: int):
    local = model.get_submodule(SCALED_SHARD).weight._local_tensor  # this rank's rows of a DTensor
    factor = 1.5 if rank == world_size - 1 else 1.0
    with torch.no_grad():
        local.mul_(factor)
    try:
        yield
    finally:
        with torch.no_grad():
            local.div_(factor)


@contextlib.contextmanager
def missing_reduction(model):
    """All-reduce calls made inside ``UNREDUCED`` do nothing (a tensor-parallel style that forgets it)."""
    inside, all_reduce = [], dist.all_reduce

    def maybe_all_reduce(tensor, *args, **kwargs):
        return None if inside else all_reduce(tensor, *args, **kwargs)

    module = model.get_submodule(UNREDUCED)
    hooks = [
        module.register_forward_pre_hook(lambda *_: inside.append(True)),
        module.register_forward_hook(lambda *_: inside.clear()),
    ]
    dist.all_reduce = maybe_all_reduce
    try:
        yield
    finally:
        dist.all_reduce = all_reduce
        for hook in hooks:
            hook.remove()


def main(rank: int, world_size: int, init_file: str, model_dir: str, output_root: str) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    # a rank whose peer died or hung stops waiting (and fails) after this, instead of gloo's 30 minutes
    dist.init_process_group(
        "gloo",
        init_method=f"file://{init_file}",
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=120),
    )
    try:
        output = Path(output_root)
        input_ids = torch.arange(10).reshape(1, 10)
        if rank == 0:
            reference = LlamaForCausalLM.from_pretrained(model_dir).eval()
            with model_addition_debugger_context(reference, output / "reference", **TRACE_OPTIONS):
                reference(input_ids)
        model = LlamaForCausalLM.from_pretrained(model_dir, tp_plan="auto").eval()
        with model_addition_debugger_context(model, output / "gathered", ranks="gathered", **TRACE_OPTIONS):
            model(input_ids)
        with (
            scaled_shard(model, rank, world_size),
            model_addition_debugger_context(
                model, output / "scaled_shard", ranks="gathered", **TRACE_OPTIONS
            ),
        ):
            model(input_ids)
        with (
            missing_reduction(model),
            model_addition_debugger_context(
                model, output / "missing_reduction", ranks="gathered", **TRACE_OPTIONS
            ),
        ):
            model(input_ids)
        with model_addition_debugger_context(model, output / "per_rank", ranks="all", **TRACE_OPTIONS):
            model(input_ids)
        with (
            scaled_shard(model, rank, world_size),
            model_addition_debugger_context(
                model, output / "per_rank_scaled_shard", ranks="all", **TRACE_OPTIONS
            ),
        ):
            model(input_ids)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5])
