"""compare on real porting pairs (see porting_pairs.py): a correct conversion is equivalent, and each
injected porting bug is found at the module it is in, whether or not the module trees agree."""

import pytest
import torch
from torch import nn

from model_debugging import compare_traces
from model_debugging.compare.command import main

from .porting_pairs import (
    Bug,
    TinyGpt,
    convert_gpt2_to_tiny,
    convert_llama_to_mistral,
    convert_llama_to_phi3,
    gpt2,
    input_ids,
    llama,
    trace,
)

pytestmark = pytest.mark.integration
transformers = pytest.importorskip("transformers")

# reference (model) path of the module each bug is in, and the call whose inputs first differ
# inside it when the bug is in the parent's own code
LLAMA_ORIGINS = {
    Bug.ROPE_BASE: ("model.rotary_emb", None),
    Bug.NORM_EPSILON: ("model.layers.0.input_layernorm", None),
    Bug.MISSING_RESIDUAL: ("model.layers.1", "model.layers.1.post_attention_layernorm"),
    Bug.TRANSPOSED_WEIGHT: ("model.layers.1.self_attn.o_proj", None),
}
PHI3_ORIGINS = {**LLAMA_ORIGINS, Bug.SWAPPED_FUSED_HALVES: ("model.layers.1.mlp.gate_proj", None)}
GPT2_ORIGINS = {
    Bug.NORM_EPSILON: ("transformer.h.0.ln_1", None),
    Bug.MISSING_RESIDUAL: ("transformer.h.1", "transformer.h.1.ln_2"),
    Bug.TRANSPOSED_WEIGHT: ("transformer.h.1.attn.c_proj", None),
    Bug.SWAPPED_FUSED_HALVES: ("transformer.h.1.attn.c_attn", None),
}
PAIRS = {
    "llama-mistral": (llama, convert_llama_to_mistral, LLAMA_ORIGINS),
    "llama-phi3": (llama, convert_llama_to_phi3, PHI3_ORIGINS),
    "gpt2-tiny": (gpt2, convert_gpt2_to_tiny, GPT2_ORIGINS),
}
CASES = [(pair, bug) for pair, (_, _, origins) in PAIRS.items() for bug in (Bug.NONE, *origins)]


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """(reference trace, candidate trace) per (pair, bug, use_repr); each trace is recorded once."""
    directory = tmp_path_factory.mktemp("porting")
    cache = {}

    def get(pair: str, bug: Bug, use_repr: bool = False):
        build, convert, _ = PAIRS[pair]
        reference_key, candidate_key = (pair, use_repr), (pair, bug, use_repr)
        if reference_key not in cache:
            cache[reference_key] = trace(
                build(), directory / f"{pair}-{use_repr}", input_ids(), use_repr=use_repr
            )
        if candidate_key not in cache:
            candidate = convert(build(), bug)
            cache[candidate_key] = trace(
                candidate, directory / f"{pair}-{bug.name}-{use_repr}", input_ids(), use_repr=use_repr
            )
        return cache[reference_key], cache[candidate_key]

    return get


def _root(result) -> str:
    return result.modules[0].module_path


@pytest.mark.parametrize(("pair", "bug"), CASES, ids=[f"{pair}-{bug.name.lower()}" for pair, bug in CASES])
def test_each_porting_bug_is_found_where_it_is(traced, pair, bug):
    result = compare_traces(*traced(pair, bug))
    assert not result.unmatched_reference and not result.unmatched_candidate
    if bug is Bug.NONE:
        assert result.equivalent, "\n".join(result.summary_lines())
        return
    origin, first_differing_inside = PAIRS[pair][2][bug]
    assert not result.equivalent
    assert result.divergence_origin.module_path == f"{_root(result)}.{origin}"
    assert all(module.status == "equal" for module in result.modules[: result.divergence_origin.index])
    if first_differing_inside is None:
        assert result.origin_note is None
    else:
        assert result.origin_note == (
            f"the difference is made inside {_root(result)}.{origin}, before {_root(result)}."
            f"{first_differing_inside} (the first call in it whose inputs differ): in its own code"
        )


def test_gpt2_against_an_implementation_with_other_names_and_split_projections(traced, tmp_path, capsys):
    reference, candidate = traced("gpt2-tiny", Bug.NONE)
    result = compare_traces(reference, candidate)
    summary = result.alignment
    assert (summary.inferred_pairs, summary.projections, summary.identities) == (21, 2, 5)
    split = next(module for module in result.modules if module.alignment.value == "split")
    assert (split.module_path, split.candidate_path) == (
        "GPT2LMHeadModel.transformer.h.0.attn.c_attn",
        "TinyGpt.blocks.0.attention.query",
    )
    assert split.details == (
        "split: GPT2LMHeadModel.transformer.h.0.attn.c_attn = TinyGpt.blocks.0.attention.query + "
        "TinyGpt.blocks.0.attention.key + TinyGpt.blocks.0.attention.value",
    )
    saved = tmp_path / "renames.yaml"
    assert main([str(reference), str(candidate), "--save_renames", str(saved)]) == 0
    rules = saved.read_text()
    assert (
        "  - pattern: '^blocks\\.(\\d+)\\.attention\\.output$'\n    replacement: 'transformer.h.\\1.attn.c_proj'\n"
        in rules
    )
    assert "#   GPT2LMHeadModel.transformer.drop" in rules
    # the saved rules pair every one-to-one call by path; the fused projections are aligned again
    again = compare_traces(reference, candidate, rename=saved)
    assert again.equivalent and again.alignment.inferred_pairs == 0 and again.alignment.projections == 2
    # without the alignment the split projections stay unpaired: notes, not differences
    assert main([str(reference), str(candidate), "--no_align", "--config", str(saved)]) == 0
    assert (
        "could not align 7 reference call(s), first GPT2LMHeadModel.transformer: paths and rename rules only "
        "(--no_align); 6 candidate call(s), first TinyGpt.blocks.0.attention.query"
    ) in capsys.readouterr().out


class ProbedTinyGpt(TinyGpt):
    """A port that also runs a module the reference has no counterpart for (its output unused)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.probe = nn.Linear(args[2], 3)

    def forward(self, input_ids):
        logits = super().forward(input_ids)
        self.probe(logits[..., : self.probe.in_features])
        return logits


def test_a_call_nothing_accounts_for_is_named_in_one_line(traced, tmp_path, capsys):
    reference, _ = traced("gpt2-tiny", Bug.NONE)
    port = convert_gpt2_to_tiny(gpt2())
    probed = ProbedTinyGpt(100, 32, 32, 2, 4, 1e-5)
    probed.load_state_dict(port.state_dict(), strict=False)
    candidate = trace(probed.eval(), tmp_path / "probed", input_ids())
    assert main([str(reference), str(candidate)]) == 1
    printed = capsys.readouterr().out
    assert (
        "result: NOT CONFIRMED: every compared call agrees, but the final outputs were not compared: "
        "the candidate's last call ProbedTinyGpt.probe has no counterpart"
    ) in printed
    assert (
        "could not align 1 candidate call(s), first ProbedTinyGpt.probe: no reference call left under the "
        "counterpart of ProbedTinyGpt has its input [1, 8, 32] torch.float32, output [1, 8, 3] torch.float32"
    ) in printed
    # what the models return can confirm it: the way there is named
    assert printed.rstrip().endswith(
        "The traces cannot confirm the final outputs; debug_port(reference, port, inputs) also compares what "
        "the two models return (docs/compare.md)."
    )


@pytest.mark.parametrize(
    ("pair", "origin"),
    [("gpt2-tiny", "transformer.h.1.attn"), ("llama-phi3", "model.layers.1.mlp")],
)
def test_summary_traces_align_from_shapes_and_say_what_they_cannot_see(traced, pair, origin):
    assert compare_traces(*traced(pair, Bug.NONE, use_repr=True)).equivalent
    result = compare_traces(*traced(pair, Bug.SWAPPED_FUSED_HALVES, use_repr=True))
    assert "aligned automatically from execution order, shapes and dtypes only (summary statistics" in (
        "\n".join(result.summary_lines())
    )
    # mean/std/min/max of a concatenation do not depend on the order of its parts: the fused
    # projection agrees, and the origin is the module around it, with a note naming the projection
    assert result.divergence_origin.module_path == f"{_root(result)}.{origin}"
    assert "summary statistics cannot tell when the parts of a fused projection are in the wrong order" in (
        result.origin_note
    )


def test_llama_against_mistral_needs_no_alignment(traced):
    result = compare_traces(*traced("llama-mistral", Bug.NONE))
    assert {module.alignment.value for module in result.modules} == {"path"}
    assert result.alignment.summary_line() is None
    assert torch.tensor([module.max_abs_diff or 0.0 for module in result.modules]).max() <= 1e-5


def test_align_traces_maps_reference_modules_to_the_ports(traced):
    from model_debugging import align_traces

    alignment = align_traces(*traced("gpt2-tiny", Bug.NONE))
    path_map = alignment.path_map()
    assert path_map["GPT2LMHeadModel.transformer.h.1.attn.c_attn"] == tuple(
        f"TinyGpt.blocks.1.attention.{name}" for name in ("query", "key", "value")
    )
    assert path_map["GPT2LMHeadModel.transformer.wte"] == ("TinyGpt.token_embedding",)
    assert "GPT2LMHeadModel.transformer.drop" not in path_map  # an identity: dropped out
    assert alignment.unaligned_reason() is None
    assert align_traces(*traced("gpt2-tiny", Bug.NONE), infer=False).path_map() == {
        "GPT2LMHeadModel": ("TinyGpt",),
        "GPT2LMHeadModel.lm_head": ("TinyGpt.lm_head",),
    }
