"""One rank of the tensor-parallel debugger tests (run by test_tensor_parallel.py, not collected by pytest).

Rank 0 saves a tiny Llama; every rank loads it with ``from_pretrained(path, tp_plan="auto")`` (gloo
on CPU) and traces it
with ``ranks="gathered"``: correct, with one rank's shard of a projection scaled, and with the
reduction of one ``o_proj`` left out; then with ``ranks="all"``, correct and with the scaled shard.
Rank 0 also traces the unsharded model as the reference.

Usage: python tensor_parallel_worker.py RANK WORLD_SIZE INIT_FILE OUTPUT_ROOT SCALED_SHARD UNREDUCED

SCALED_SHARD: a column-parallel projection whose last rank's shard is scaled by 1.5; UNREDUCED: a
row-parallel projection whose partial sums are never reduced (module names of the model).
"""

import contextlib
import os
import sys
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from transformers import LlamaConfig, LlamaForCausalLM

from model_debugging import model_addition_debugger_context

TRACE_OPTIONS = {"use_repr": False, "do_prune_layers": False}


@contextlib.contextmanager
def scaled_shard(model, name: str, rank: int, world_size: int):
    local = model.get_submodule(name).weight._local_tensor  # this rank's rows of a DTensor
    factor = 1.5 if rank == world_size - 1 else 1.0
    with torch.no_grad():
        local.mul_(factor)
    try:
        yield
    finally:
        with torch.no_grad():
            local.div_(factor)


@contextlib.contextmanager
def missing_reduction(model, name: str):
    """All-reduce calls made inside the module ``name`` do nothing (a tensor-parallel style that forgets it)."""
    inside, all_reduce = [], dist.all_reduce

    def maybe_all_reduce(tensor, *args, **kwargs):
        return None if inside else all_reduce(tensor, *args, **kwargs)

    module = model.get_submodule(name)
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


def save_tiny_llama(directory: Path) -> None:
    torch.manual_seed(0)
    config = LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        vocab_size=128,
        max_position_embeddings=64,
    )
    LlamaForCausalLM(config).save_pretrained(directory)


def main(rank: int, world_size: int, init_file: str, output_root: str, scaled: str, unreduced: str) -> None:
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
        model_dir = output / "model"
        input_ids = torch.arange(10).reshape(1, 10)
        if rank == 0:
            save_tiny_llama(model_dir)
        dist.barrier()
        if rank == 0:
            reference = LlamaForCausalLM.from_pretrained(model_dir).eval()
            with model_addition_debugger_context(reference, output / "reference", **TRACE_OPTIONS):
                reference(input_ids)
        model = LlamaForCausalLM.from_pretrained(model_dir, tp_plan="auto").eval()
        with model_addition_debugger_context(model, output / "gathered", ranks="gathered", **TRACE_OPTIONS):
            model(input_ids)
        with (
            scaled_shard(model, scaled, rank, world_size),
            model_addition_debugger_context(
                model, output / "scaled_shard", ranks="gathered", **TRACE_OPTIONS
            ),
        ):
            model(input_ids)
        with (
            missing_reduction(model, unreduced),
            model_addition_debugger_context(
                model, output / "missing_reduction", ranks="gathered", **TRACE_OPTIONS
            ),
        ):
            model(input_ids)
        with model_addition_debugger_context(model, output / "per_rank", ranks="all", **TRACE_OPTIONS):
            model(input_ids)
        with (
            scaled_shard(model, scaled, rank, world_size),
            model_addition_debugger_context(
                model, output / "per_rank_scaled_shard", ranks="all", **TRACE_OPTIONS
            ),
        ):
            model(input_ids)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:])
