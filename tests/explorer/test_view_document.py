"""What the explorer page is built from: the calls of a trace, their badges, and a comparison."""

from __future__ import annotations

import json
import math
import re

import pytest

from model_debugging import view_document
from model_debugging.explorer.page import render_page
from tests.explorer.traces import ToySpec, write_toy_trace, write_upstream_llama_trace


def _by_path(document: dict) -> dict[str, dict]:
    return {node["path"]: node for node in document["nodes"]}


def _badge_kinds(node: dict) -> list[str]:
    return [badge["kind"] for badge in node.get("badges", [])]


def test_every_call_is_listed_in_execution_order_with_its_parent(tmp_path):
    document = view_document(write_toy_trace(tmp_path))
    paths = [node["path"] for node in document["nodes"]]
    assert paths[:4] == ["ToyModel", "ToyModel.layers.0", "ToyModel.layers.0.proj", "ToyModel.layers.0.scale"]
    assert paths[-1] == "ToyModel.head"
    nodes = _by_path(document)
    proj = nodes["ToyModel.layers.0.proj"]
    assert document["nodes"][proj["parent"]]["path"] == "ToyModel.layers.0"
    assert proj["name"] == "proj" and nodes["ToyModel.layers.0"]["name"] == "layers.0"
    output = proj["outputs"][0]
    assert (output["at"], output["shape"], output["dtype"]) == ("", [2, 3, 8], "float32")
    assert list(output["stats"]) == ["mean", "std", "min", "max"]
    assert nodes["ToyModel.layers.0"]["outputs"] is None  # not recorded for modules with children


def test_each_call_carries_its_module_class_each_distinct_class_once(tmp_path):
    document = view_document(write_toy_trace(tmp_path))
    nodes = _by_path(document)

    def module_class(path):
        return document["classes"][nodes[path]["cls"]]

    assert module_class("ToyModel") == "tests.explorer.traces.ToyModel"
    assert module_class("ToyModel.layers.2") == "tests.explorer.traces.Block"
    assert (
        module_class("ToyModel.layers.0.proj")
        == module_class("ToyModel.head")
        == "torch.nn.modules.linear.Linear"
    )
    assert sorted(document["classes"]) == [
        "tests.explorer.traces.Block",
        "tests.explorer.traces.Scale",
        "tests.explorer.traces.ToyModel",
        "torch.nn.modules.linear.Linear",
    ]


def test_repr_trace_carries_printed_values_each_distinct_text_once(tmp_path):
    document = view_document(write_toy_trace(tmp_path))
    nodes = _by_path(document)
    output = nodes["ToyModel.head"]["outputs"][0]
    assert document["values"][output["values"]].startswith("tensor([[[")
    assert "histogram" not in output
    # the tensor layers.0 passes on is printed once, referred to by both calls
    passed_on = nodes["ToyModel.layers.0.scale"]["outputs"][0]["values"]
    assert nodes["ToyModel.layers.1.proj"]["inputs"][0]["values"] == passed_on


def test_tensor_file_trace_carries_a_histogram_per_tensor(tmp_path):
    document = view_document(write_toy_trace(tmp_path, ToySpec(use_repr=False)))
    assert document["mode"] == "tensors"
    output = _by_path(document)["ToyModel.layers.1.proj"]["outputs"][0]
    histogram = output["histogram"]
    assert sum(histogram["counts"]) == 2 * 3 * 8 and len(histogram["counts"]) == 24
    assert (histogram["low"], histogram["high"]) == pytest.approx(
        (output["stats"]["min"], output["stats"]["max"]), rel=1e-4
    )
    assert "values" not in output


def test_a_missing_tensor_file_costs_its_histogram_not_the_page(tmp_path):
    write_toy_trace(tmp_path, ToySpec(use_repr=False))
    (tmp_path / "ToyModel.head_outputs.safetensors").unlink()
    output = _by_path(view_document(tmp_path))["ToyModel.head"]["outputs"][0]
    assert "histogram" not in output
    assert (
        "ToyModel.head_outputs.safetensors: tensor file named in the trace is missing"
        in output["histogramError"]
    )


def test_nan_gets_a_badge(tmp_path):
    spec = ToySpec(factors=[1.0, math.nan, 1.0])
    nodes = _by_path(view_document(write_toy_trace(tmp_path, spec)))
    assert _badge_kinds(nodes["ToyModel.layers.0.scale"]) == []
    nan_badge = nodes["ToyModel.layers.1.scale"]["badges"][0]
    assert nan_badge == {"kind": "nan", "label": "NaN", "detail": "NaN in outputs"}
    assert nodes["ToyModel.layers.1.scale"]["outputs"][0]["stats"]["mean"] == "NaN"
    assert _badge_kinds(nodes["ToyModel.layers.2.proj"]) == ["nan"]  # NaN flowed in


def test_infinities_of_both_signs_are_not_called_nan(tmp_path):
    # mean and std of [-inf, inf, ...] are NaN: only min and max say what the values hold
    nodes = _by_path(view_document(write_toy_trace(tmp_path, ToySpec(extra={"overflow": math.inf}))))
    assert nodes["ToyModel.extra.overflow"]["outputs"][0]["stats"]["mean"] == "NaN"
    assert nodes["ToyModel.extra.overflow"]["badges"] == [
        {"kind": "inf", "label": "Inf", "detail": "Inf in outputs"}
    ]


def test_a_scale_that_collapses_against_the_previous_layer_gets_a_jump_badge(tmp_path):
    nodes = _by_path(view_document(write_toy_trace(tmp_path, ToySpec(factors=[1.0, 1e-4, 1.0]))))
    badge = nodes["ToyModel.layers.1.scale"]["badges"][0]
    assert badge["kind"] == "jump" and badge["label"].startswith("σ÷")
    assert "ToyModel.layers.0.scale" in badge["detail"]


def test_a_scale_that_blows_up_against_the_parent_gets_a_jump_badge(tmp_path):
    nodes = _by_path(view_document(write_toy_trace(tmp_path, ToySpec(factors=[1.0, 1.0, 1e4]))))
    badge = nodes["ToyModel.layers.2.scale"]["badges"][0]
    assert badge["kind"] == "jump" and badge["label"].startswith("σ×")
    assert "parent's input" in badge["detail"]


def test_an_ordinary_trace_has_no_badges(tmp_path):
    document = view_document(write_toy_trace(tmp_path))
    assert [node["path"] for node in document["nodes"] if node.get("badges")] == []


def test_pruned_trace_keeps_first_and_last_layer_and_says_how_many_are_missing(tmp_path):
    document = view_document(write_toy_trace(tmp_path, ToySpec(factors=[1.0] * 5, prune=True)))
    layers = [
        node["path"] for node in document["nodes"] if re.fullmatch(r"ToyModel\.layers\.\d+", node["path"])
    ]
    assert layers == ["ToyModel.layers.0", "ToyModel.layers.4"]
    nodes = _by_path(document)
    assert (
        nodes["ToyModel.layers.4"]["prunedBefore"] == 3 and "prunedBefore" not in nodes["ToyModel.layers.0"]
    )


def test_the_call_that_raised_is_badged(tmp_path):
    nodes = _by_path(view_document(write_toy_trace(tmp_path, ToySpec(fail=True))))
    failed = nodes["ToyModel.extra.fail"]
    assert failed["exception"] == "ValueError: shapes do not line up"
    assert failed["badges"][0]["kind"] == "exception"
    assert "exception" not in nodes["ToyModel"]  # recorded on the innermost call only


def test_module_names_cannot_break_out_of_the_embedded_data(tmp_path):
    name = "</script><script>alert(1)</script><!--"
    trace = write_toy_trace(tmp_path, ToySpec(extra={name: 1.0}))
    page = render_page(view_document(trace))
    assert page.count("</script>") == 3  # the data, the values and the explorer script
    embedded = page.split('<script type="application/json" id="trace-data">')[1].split("</script>")[0]
    assert f"ToyModel.extra.{name}" in _by_path(json.loads(embedded))


def test_comparison_marks_diverged_calls_and_the_origin(tmp_path):
    reference = write_toy_trace(tmp_path / "reference")
    candidate = write_toy_trace(tmp_path / "candidate", ToySpec(factors=[1.0, 1.5, 1.0]))
    document = view_document(reference, compare=candidate)
    nodes = document["nodes"]
    statuses = {node["path"]: node["comparison"]["status"] for node in nodes}
    assert statuses["ToyModel.layers.0.scale"] == "equal"
    assert statuses["ToyModel.layers.1.scale"] == statuses["ToyModel.head"] == "diverged"
    assert nodes[document["comparison"]["origin"]]["path"] == "ToyModel.layers.1.scale"
    assert any(
        line.startswith("divergence origin: ToyModel.layers.1.scale")
        for line in document["comparison"]["lines"]
    )
    origin = _by_path(document)["ToyModel.layers.1.scale"]["comparison"]
    assert origin["verdict"] == "outputs differ" and 1 <= origin["level"] <= 5
    # each value with the candidate's value beside it, as compare paired them
    given, made = origin["values"]
    assert (given["place"], given["at"], given["candidateAt"], given["status"]) == (
        "inputs",
        "args.0",
        "args.0",
        "equal",
    )
    assert (made["place"], made["status"], made["pairedBy"]) == ("outputs", "differs", "name")
    reference_stats = _by_path(document)["ToyModel.layers.1.scale"]["outputs"][0]["stats"]
    assert made["candidate"]["shape"] == [2, 3, 8] and made["candidate"]["stats"] != reference_stats


def test_calls_in_one_trace_only_are_shown_where_they_ran(tmp_path):
    reference = write_toy_trace(tmp_path / "reference", ToySpec(extra={"dropout": 1.0}))
    candidate = write_toy_trace(tmp_path / "candidate", ToySpec(extra={"norm": 1.0}))
    document = view_document(reference, compare=candidate, align=False)  # both identities: aligned away
    nodes = _by_path(document)
    assert nodes["ToyModel.extra.dropout"]["comparison"] == {"status": "unmatched"}
    norm = nodes["ToyModel.extra.norm"]
    assert norm["comparison"] == {"status": "candidate-only"}
    assert document["nodes"][norm["parent"]]["path"] == "ToyModel"
    paths = [node["path"] for node in document["nodes"]]
    # where it ran: after layers.2 (its preceding sibling in the candidate), before the head
    assert (
        paths.index("ToyModel.layers.2.scale")
        < paths.index("ToyModel.extra.norm")
        < paths.index("ToyModel.head")
    )
    # with compare's alignment, two calls whose output equals their input are set aside, not unmatched
    aligned = _by_path(view_document(reference, compare=candidate))
    assert aligned["ToyModel.extra.dropout"]["comparison"] == aligned["ToyModel.extra.norm"]["comparison"]
    assert aligned["ToyModel.extra.norm"]["comparison"] == {"status": "accounted"}


@pytest.mark.integration
@pytest.mark.parametrize("use_repr", [True, False])
def test_transformers_own_trace(tmp_path, use_repr):
    trace = write_upstream_llama_trace(tmp_path, layers=2, use_repr=use_repr)
    nodes = _by_path(view_document(trace))
    assert "LlamaForCausalLM.model.layers.1.mlp.down_proj" in nodes
    assert not any("cls" in node for node in nodes.values())  # upstream does not record classes
    stats = nodes["LlamaForCausalLM.lm_head"]["outputs"][0]
    assert ("values" in stats) is use_repr and ("histogram" in stats) is not use_repr


@pytest.mark.integration
def test_calls_compare_aligned_are_marked_and_the_inferred_renames_offered(tmp_path):
    from tests.compare.porting_pairs import Bug, convert_llama_to_phi3, input_ids, llama, trace

    reference = trace(llama(), tmp_path / "llama", input_ids())
    candidate = trace(
        convert_llama_to_phi3(llama(), Bug.SWAPPED_FUSED_HALVES), tmp_path / "phi3", input_ids()
    )
    document = view_document(reference, compare=candidate)
    nodes = _by_path(document)
    origin = document["nodes"][document["comparison"]["origin"]]
    assert origin["path"] == "LlamaForCausalLM.model.layers.1.mlp.gate_proj"
    assert origin["comparison"]["alignment"] == "fused"
    assert origin["comparison"]["candidatePath"] == "Phi3ForCausalLM.model.layers.1.mlp.gate_up_proj"
    # each matched call carries the candidate's class, here a different one than the reference's
    mlp = nodes["LlamaForCausalLM.model.layers.1.mlp"]
    assert document["classes"][mlp["cls"]] == "transformers.models.llama.modeling_llama.LlamaMLP"
    assert mlp["comparison"]["candidateClass"] == "transformers.models.phi3.modeling_phi3.Phi3MLP"
    # the other half of the fused projection, and the candidate's dropouts, are accounted for
    assert nodes["LlamaForCausalLM.model.layers.1.mlp.up_proj"]["comparison"] == {"status": "accounted"}
    dropout = nodes["Phi3ForCausalLM.model.layers.1.resid_mlp_dropout"]
    assert dropout["comparison"] == {"status": "accounted"} and dropout["name"] == "resid_mlp_dropout"
    assert "candidate-only" not in {node["comparison"]["status"] for node in document["nodes"]}
    assert document["comparison"]["inferredRenames"].startswith("# Rename rules")


def test_experts_no_token_was_routed_to_are_not_said_pruned(tmp_path):
    """A DeepSeek-V3 port calls only the experts tokens were routed to (``experts.0``, ``experts.4``):
    its three blocks show the trace was not pruned, so no block says 'pruned before'."""
    pytest.importorskip("transformers")
    from tests.ports import deepseek_v3
    from tests.ports.catalog import trace

    reference = deepseek_v3.reference()
    document = view_document(trace(deepseek_v3.port(reference), tmp_path / "port", deepseek_v3.inputs()))
    experts = [node for node in document["nodes"] if re.search(r"\.ffn\.experts\.\d+$", node["path"])]
    assert len(experts) < 2 * len(reference.model.layers[1].mlp.experts.down_proj)  # some not called
    assert [node["path"] for node in document["nodes"] if "prunedBefore" in node] == []
