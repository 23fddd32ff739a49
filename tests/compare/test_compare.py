import json
import weakref

import pytest
import torch

from model_debugging import TraceError, compare_traces
from model_debugging.compare import numeric as compare_module
from model_debugging.compare.rendering import render_terminal


def test_identical_traces_are_equivalent(tmp_path, toy_trace):
    toy_trace(tmp_path)
    result = compare_traces(tmp_path, tmp_path)
    assert result.equivalent
    assert result.mode == "tensors" and result.note is None
    assert result.divergence_origin is None and result.first_input_divergence is None
    assert {module.status for module in result.modules} == {"equal"}
    assert result.bytes_compared > 0


def test_divergence_origin_is_the_leaf_whose_outputs_differ_first(toy_traces):
    result = compare_traces(*toy_traces)
    assert not result.equivalent
    assert result.divergence_origin.module_path == "Toy.head"
    assert result.first_input_divergence is None
    assert [m.status for m in result.modules] == ["equal", "equal", "equal", "equal", "outputs differ"]
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(0))
    logits = (x * 2 + 1).sum(-1)
    head = result.divergence_origin
    assert head.max_abs_diff == pytest.approx(float((logits * 0.5).abs().max()), rel=1e-6)
    assert head.mean_abs_diff == pytest.approx(float((logits * 0.5).abs().mean()), rel=1e-6)
    assert head.max_rel_diff == pytest.approx(0.5, rel=1e-6)


def test_a_loose_tolerance_accepts_the_difference(toy_traces):
    assert compare_traces(*toy_traces, atol=10.0).equivalent
    assert compare_traces(*toy_traces, atol=0.0, rtol=0.6).equivalent


def test_repr_traces_compare_statistics_and_say_so(tmp_path, toy_trace):
    toy_trace(tmp_path / "a", use_repr=True)
    toy_trace(tmp_path / "b", use_repr=True, head_scale=1.5)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.mode == "stats"
    assert "only summary statistics" in result.note
    assert any("only summary statistics" in line for line in result.summary_lines())
    assert result.divergence_origin.module_path == "Toy.head"
    assert compare_traces(tmp_path / "a", tmp_path / "a").equivalent


def test_one_repr_trace_falls_back_to_statistics(tmp_path, toy_trace):
    toy_trace(tmp_path / "a")
    toy_trace(tmp_path / "b", use_repr=True)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.mode == "stats" and result.equivalent


def _two_leaf_trace(writer, first_output, second_input, second_output):
    x = torch.ones(2, 3)
    return writer.write(
        writer.node(
            "Toy",
            {"args": [x]},
            children=[
                writer.node("Toy.first", {"args": [x]}, first_output),
                writer.node("Toy.second", {"args": [second_input]}, second_output),
            ],
        )
    )


def test_shape_and_dtype_mismatches_are_reported(tmp_path, trace_writer):
    y = torch.ones(2, 3)
    _two_leaf_trace(trace_writer(tmp_path / "a"), y, y, y)
    _two_leaf_trace(trace_writer(tmp_path / "b"), torch.ones(3, 2), y, y.double())
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    first, second = result.modules[1], result.modules[2]
    assert first.details == ("outputs shape [2, 3] vs [3, 2]",) and first.outputs_match is False
    assert (
        second.details == ("outputs dtype torch.float32 vs torch.float64",) and second.outputs_match is False
    )
    assert second.max_abs_diff == 0.0
    assert result.divergence_origin is first


def test_inputs_that_differ_without_a_diverging_leaf_make_the_parent_the_origin(tmp_path, trace_writer):
    y = torch.ones(2, 3)
    _two_leaf_trace(trace_writer(tmp_path / "a"), y, y, y)
    _two_leaf_trace(trace_writer(tmp_path / "b"), y, y * 2, y * 2)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.divergence_origin.module_path == "Toy"
    assert (
        result.divergence_origin.status == "outputs differ" and result.divergence_origin.max_abs_diff == 1.0
    )
    assert result.first_input_divergence.module_path == "Toy.second"
    assert result.origin_note == (
        "the difference is made inside Toy, before Toy.second (the first call in it whose inputs differ): "
        "in its own code"
    )
    assert f"  {result.origin_note}" in result.summary_lines()


def test_inputs_that_differ_at_the_model_leave_no_origin(tmp_path, trace_writer):
    y = torch.ones(2, 3)
    _two_leaf_trace(trace_writer(tmp_path / "a"), y, y, y)
    writer = trace_writer(tmp_path / "b")
    writer.write(writer.node("Toy", {"args": [y * 2]}, children=[writer.node("Toy.first", {"args": [y]}, y)]))
    result = compare_traces(tmp_path / "a", tmp_path / "b", align=False)
    assert result.divergence_origin is None
    assert result.first_input_divergence.module_path == "Toy"
    assert any("or at the model inputs" in line for line in result.summary_lines())


def test_nan_and_inf_in_the_same_places_count_as_equal(tmp_path, trace_writer):
    y = torch.tensor([[1.0, float("nan"), float("inf")], [0.0, -float("inf"), 2.0]])
    _two_leaf_trace(trace_writer(tmp_path / "a"), y, y, y)
    _two_leaf_trace(trace_writer(tmp_path / "b"), y.clone(), y, torch.where(y.isnan(), 0.0, y))
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.modules[1].status == "equal"
    assert result.divergence_origin.module_path == "Toy.second"
    assert result.divergence_origin.max_abs_diff == float("inf")
    assert result.to_frame()["max_abs_diff"].iloc[2] == float("inf")
    assert json.loads(json.dumps(result.to_dict()))["divergence_origin"]["max_abs_diff"] == "inf"


def test_repeated_calls_match_by_call_order_and_extra_calls_are_unmatched(tmp_path, trace_writer):
    def write(directory, calls):
        writer = trace_writer(directory)
        x = torch.ones(2)
        children = [
            writer.node(
                "Toy.shared",
                {"args": [x * i]},
                x * i,
            )
            for i in range(calls)
        ]
        return writer.write(writer.node("Toy", {"args": [x]}, children=children))

    write(tmp_path / "a", 2)
    write(tmp_path / "b", 3)
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert [(m.module_path, m.call_index, m.status) for m in result.modules[1:]] == [
        ("Toy.shared", 0, "equal"),
        ("Toy.shared", 1, "equal"),
    ]
    assert result.unmatched_candidate == ("Toy.shared (call 2)",)
    assert not result.equivalent


def test_rename_rules_align_different_module_names(tmp_path, toy_trace):
    toy_trace(tmp_path / "a")
    toy_trace(tmp_path / "b", class_name="Port")
    assert compare_traces(tmp_path / "a", tmp_path / "b").equivalent  # root class names are not compared
    toy_trace(tmp_path / "b", class_name="Port", block="stage")
    result = compare_traces(tmp_path / "a", tmp_path / "b", align=False)
    assert result.unmatched_reference == ("Toy.block", "Toy.block.linear")
    assert result.unmatched_candidate == ("Port.stage", "Port.stage.linear")
    renamed = compare_traces(tmp_path / "a", tmp_path / "b", rename=[r"^stage\b=block"])
    assert renamed.equivalent
    assert renamed.modules[3].candidate_path == "Port.stage.linear"
    rules = tmp_path / "renames.yaml"
    rules.write_text("renames:\n  - pattern: '^stage\\b'\n    replacement: block\n")
    for rename in (rules, str(rules)):  # a rules file as a Path or as a string
        from_file = compare_traces(tmp_path / "a", tmp_path / "b", rename=rename, align=False)
        assert from_file.equivalent and from_file.rename_rules == (r"^stage\b=block",)


def test_an_exception_on_one_side_marks_the_outputs_as_different(tmp_path, trace_writer):
    y = torch.ones(2, 3)
    _two_leaf_trace(trace_writer(tmp_path / "a"), y, y, y)
    path = _two_leaf_trace(trace_writer(tmp_path / "b"), y, y, y)
    tree = json.loads(path.read_text())
    tree["children"][1]["exception"] = {"type": "RuntimeError", "message": "shape mismatch"}
    path.write_text(json.dumps(tree))
    result = compare_traces(tmp_path / "a", tmp_path / "b")
    assert result.divergence_origin.module_path == "Toy.second"
    # The origin line shows the first detail: it names what the candidate raised, not that the
    # reference did not ("divergence origin: Toy.second (reference did not raise)" said nothing).
    assert result.divergence_origin.details[0] == (
        "candidate raised RuntimeError: shape mismatch (the reference did not raise)"
    )
    assert "origin: Toy.second (candidate raised RuntimeError: shape mismatch" in render_terminal(result, 200)


def test_missing_tensor_file_is_named(toy_traces):
    reference, candidate = toy_traces
    (candidate / "Toy.head_outputs.safetensors").unlink()
    with pytest.raises(
        TraceError, match="Toy.head_outputs.safetensors: tensor file named in the trace is missing"
    ):
        compare_traces(reference, candidate)


def test_corrupt_tensor_file_is_named(toy_traces):
    reference, candidate = toy_traces
    (candidate / "Toy.embed_outputs.safetensors").write_bytes(b"garbage")
    with pytest.raises(TraceError, match="Toy.embed_outputs.safetensors: cannot read tensor"):
        compare_traces(reference, candidate)


def test_full_tensor_comparison_holds_one_pair_at_a_time(toy_traces, monkeypatch):
    alive: set[int] = set()
    most_alive = 0
    load = compare_module.read_recorded_tensor

    def tracked_load(record):
        nonlocal most_alive
        tensor = load(record)
        storage = tensor.untyped_storage()  # views share it: it lives as long as any view of the tensor
        key = id(storage)
        alive.add(key)
        weakref.finalize(storage, alive.discard, key)
        most_alive = max(most_alive, len(alive))
        return tensor

    monkeypatch.setattr(compare_module, "read_recorded_tensor", tracked_load)
    result = compare_traces(*toy_traces)
    assert len(result.modules) == 5
    assert most_alive == 2


def test_frame_and_dict_have_a_row_per_matched_call(toy_traces):
    result = compare_traces(*toy_traces)
    frame = result.to_frame()
    assert list(frame["module_path"]) == ["Toy", "Toy.embed", "Toy.block", "Toy.block.linear", "Toy.head"]
    assert list(frame["status"])[-1] == "outputs differ"
    data = json.loads(json.dumps(result.to_dict()))
    assert data["divergence_origin"]["module_path"] == "Toy.head"
    assert data["mode"] == "tensors" and data["equivalent"] is False
    assert len(data["modules"]) == 5


def test_negative_tolerance_is_refused(toy_traces):
    with pytest.raises(ValueError, match="tolerances must be >= 0"):
        compare_traces(*toy_traces, atol=-1)
