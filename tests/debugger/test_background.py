"""Tensor files written off the forward's thread: the bytes safetensors writes, the values the tensor had when recorded."""

import errno
import os
import sys
import threading
import time
import weakref

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from model_debugging import model_addition_debugger_context
from model_debugging.debugger import background, tensors
from model_debugging.debugger import fused_statistics as fused
from model_debugging.debugger.background import BackgroundWork
from model_debugging.debugger.fused_statistics import ChunkPass, fused_statistics
from model_debugging.debugger.single_thread import one_intra_op_thread
from model_debugging.debugger.statistics import statistics_from
from model_debugging.debugger.tensor_repr import PrintOptions
from model_debugging.debugger.trace_format import tensor_files
from model_debugging.debugger.trace_format.tensor_files import write_tensor_file

DTYPES = [
    *(torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.complex64, torch.bool),
    *(torch.int64, torch.int32, torch.int16, torch.int8),
    *(torch.uint64, torch.uint32, torch.uint16, torch.uint8),
    *(torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0, 3), (1,), (2, 3), (3, 1, 5)], ids=str)
def test_files_are_byte_identical_to_safetensors_save_file(tmp_path, dtype, shape):
    tensor = (torch.randn(shape) * 4).to(dtype)
    write_tensor_file(tmp_path / "ours.safetensors", tensor)
    save_file({"data": tensor}, str(tmp_path / "theirs.safetensors"))
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()


def test_non_contiguous_and_negated_views_are_written_as_their_values(tmp_path):
    base = torch.randn(4, 6)
    views = {"transposed": base.t(), "strided": base[:, ::2], "negated": torch._neg_view(base)}
    for name, tensor in views.items():
        write_tensor_file(tmp_path / f"{name}.safetensors", tensor)
        assert torch.equal(load_file(tmp_path / f"{name}.safetensors")["data"], tensor)


@pytest.mark.parametrize("view", [False, True], ids=["owns its storage", "view into a larger storage"])
def test_a_tensor_changed_after_it_was_queued_is_written_as_it_was(tmp_path, view):
    storage = torch.arange(12, dtype=torch.float32)
    tensor = storage[2:8] if view else storage
    expected = tensor.clone()
    queue = BackgroundWork()
    queue.write(tmp_path / "a.safetensors", tensor)
    tensor.add_(100)  # the model goes on and changes it in place
    queue.link(tmp_path / "a.safetensors", tmp_path / "b.safetensors")
    queue.wait()
    assert queue.error is None and queue.written == [tmp_path / "a.safetensors", tmp_path / "b.safetensors"]
    for name in ("a", "b"):
        assert torch.equal(load_file(tmp_path / f"{name}.safetensors")["data"], expected)


def test_after_a_failed_write_no_further_file_is_attempted(tmp_path, monkeypatch):
    def disk_full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tensor_files, "_write_safetensors", disk_full)
    queue = BackgroundWork()
    for name in ("a", "b", "c"):
        queue.write(tmp_path / f"{name}.safetensors", torch.ones(3))
    queue.wait()
    assert "a.safetensors" in str(queue.error) and "No space left" in str(queue.error)
    assert queue.written == [] and list(tmp_path.iterdir()) == []


class Doubler(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Identity()
        self.second = nn.Identity()

    def forward(self, x):
        y = self.first(x)
        y.mul_(2)  # in place, while the first record's file may still be queued
        return self.second(y)


def test_a_trace_records_each_tensor_as_it_was_when_recorded(tmp_path):
    x = torch.arange(6, dtype=torch.float32)
    with model_addition_debugger_context(Doubler(), debug_path=tmp_path, use_repr=False) as model:
        model(x.clone())
    files = {path.name: load_file(path)["data"] for path in tmp_path.glob("*.safetensors")}
    assert torch.equal(files["Doubler.first_outputs.safetensors"], x)
    assert torch.equal(files["Doubler.second_inputs_args_0.safetensors"], x * 2)


def _large_tensor() -> torch.Tensor:
    torch.manual_seed(3)
    return torch.randn(1 << 20 | 12345) * 3 + 1  # 17 chunks, the last one short


def _on_one_thread(compute, *arguments):
    """As the worker and the waiting forward's thread compute statistics: torch on one intra-op thread."""
    with one_intra_op_thread():
        return compute(*arguments)


@pytest.mark.parametrize(
    "shared_first", [False, True], ids=["shared while computed", "all taken by the waiter"]
)
def test_a_large_tensors_statistics_are_the_same_when_the_waiting_thread_shares_the_pass(shared_first):
    tensor = _large_tensor()
    alone = _on_one_thread(fused_statistics, tensor, 1)
    first_pass = ChunkPass(tensor.reshape(-1))
    if shared_first:  # the forward's thread took every chunk before the worker started
        _on_one_thread(first_pass.share)
        assert _on_one_thread(fused_statistics, tensor, 1, first_pass) == alone
        return
    sharing = [threading.Thread(target=_on_one_thread, args=(first_pass.share,)) for _ in range(2)]
    for thread in sharing:
        thread.start()
    assert _on_one_thread(fused_statistics, tensor, 1, first_pass) == alone
    for thread in sharing:
        thread.join()


@pytest.mark.usefixtures("two_threads")
def test_waiting_for_the_worker_shares_a_large_tensors_statistics_with_the_same_result(tmp_path, monkeypatch):
    tensor = _large_tensor()
    options = PrintOptions.current()
    released = threading.Event()  # the worker stays on a first job until then: wait() takes the chunks
    monkeypatch.setattr(background, "write_tensor_file", lambda path, data: released.wait())
    work = BackgroundWork()
    work.write(tmp_path / "first.safetensors", torch.zeros(1))
    pending = work.statistics(tensor, 1)
    assert pending.shareable
    threading.Timer(0.2, released.set).start()
    work.wait()
    alone = _on_one_thread(fused_statistics, tensor, 1)
    assert pending.result(options) == statistics_from(alone, tensor, options)


@pytest.mark.parametrize("use_repr", [True, False])
def test_every_queued_tensor_is_let_go_on_the_forwards_thread(tmp_path, monkeypatch, use_repr):
    """Torch's copy-on-write storages corrupt the heap when released from two threads at once: the
    worker must never drop the last reference to a tensor it was given (statistics or file)."""
    released_on: list[str] = []
    queued = background.unchanging_copy

    def watched(tensor):
        copy = queued(tensor)
        weakref.finalize(copy, lambda: released_on.append(threading.current_thread().name))
        return copy

    monkeypatch.setattr(background, "unchanging_copy", watched)
    monkeypatch.setattr(tensors, "WORKER_STATISTICS_FROM", 1)  # every tensor's statistics on the worker
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    with model_addition_debugger_context(
        model, debug_path=tmp_path, do_prune_layers=False, use_repr=use_repr
    ):
        model(torch.randn(4, 16))
    assert len(released_on) >= 4  # at least the three modules' tensors
    assert set(released_on) == {threading.current_thread().name}


@pytest.mark.integration
@pytest.mark.parametrize("threads", [1, 2])
def test_where_the_statistics_are_computed_changes_no_byte_of_a_trace(
    tmp_path, monkeypatch, request, tiny_llama, threads
):
    if threads == 2:
        request.getfixturevalue("two_threads")
    # 40 x 1000 logits: torch reduces them on both threads, in its order of additions
    input_ids = torch.randint(0, 1000, (1, 40), generator=torch.Generator().manual_seed(1))
    traces = {}
    for place, smallest in (("forward's thread", sys.maxsize), ("worker", 0)):
        monkeypatch.setattr(tensors, "WORKER_STATISTICS_FROM", smallest)
        monkeypatch.setattr(tensors, "core_left_free", lambda smallest=smallest: smallest == 0)
        with model_addition_debugger_context(tiny_llama, debug_path=tmp_path / place, use_repr=True):
            tiny_llama(input_ids=input_ids)
        traces[place] = {path.name: path.read_bytes() for path in (tmp_path / place).iterdir()}
    assert len(traces["worker"]) == 3
    assert traces["forward's thread"] == traces["worker"]


def _statistics_queued(tmp_path, monkeypatch, use_repr: bool) -> int:
    """How many tensors' statistics a traced forward of a small model queues for the worker."""
    queued = []
    statistics = BackgroundWork.statistics
    monkeypatch.setattr(
        BackgroundWork,
        "statistics",
        lambda self, tensor, *rest: queued.append(1) or statistics(self, tensor, *rest),
    )
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    with model_addition_debugger_context(
        model, debug_path=tmp_path, do_prune_layers=False, use_repr=use_repr
    ):
        model(torch.randn(4, 16))
    return len(queued)


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_with_use_repr_the_worker_computes_the_statistics_when_torch_leaves_it_a_core(
    tmp_path, monkeypatch, cores
):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    saved = torch.get_num_threads()
    torch.set_num_threads(2)  # the user's count, as torch's default on a 2-core machine
    try:
        queued = _statistics_queued(tmp_path, monkeypatch, use_repr=True)
    finally:
        torch.set_num_threads(saved)
    # the four tensors (input, two linear outputs, relu output; the relu's input is the first
    # output, reused) are small: on the forward's thread unless a core is left for the worker
    assert queued == (4 if cores > 2 else 0)


@pytest.mark.parametrize("queue_share", [1, 0.5])
def test_a_files_statistics_read_its_snapshot_and_wait_for_no_write(tmp_path, monkeypatch, queue_share):
    """The file and the statistics of one tensor hold one copy: queuing both does not wait for the
    worker, even when the tensor fills the queue's memory alone or is larger than it (the logits
    of a real model are twice the queue: their statistics used to wait for their file's write)."""
    released = threading.Event()
    monkeypatch.setattr(background, "write_tensor_file", lambda path, data: released.wait())
    tensor = torch.randn(1000)
    monkeypatch.setattr(background, "QUEUE_BYTES", int(tensor.nbytes * queue_share))
    work = BackgroundWork()
    timer = threading.Timer(5, released.set)  # the old queue waited for the file's write here
    timer.start()
    try:
        started = time.perf_counter()
        pending = work.statistics(tensor, 1, work.write(tmp_path / "a.safetensors", tensor))
        assert time.perf_counter() - started < 2
    finally:
        released.set()
        timer.cancel()
    work.wait()
    options = PrintOptions.current()
    assert pending.result(options) == statistics_from(fused_statistics(tensor, 1), tensor, options)


@pytest.mark.usefixtures("two_threads")
def test_a_large_tensors_statistics_not_started_by_the_worker_are_computed_by_the_waiting_thread(
    tmp_path, monkeypatch
):
    """At the end of a use_repr=False trace the worker writes the logits' file while the forward's
    thread computes their statistics, queued after it."""
    tensor = _large_tensor()
    released = threading.Event()
    monkeypatch.setattr(background, "write_tensor_file", lambda path, data: released.wait())
    computed_on = []
    numbers = background.numbers_off_thread

    def watched(*arguments):
        computed_on.append(threading.current_thread().name)
        return numbers(*arguments)

    monkeypatch.setattr(background, "numbers_off_thread", watched)
    work = BackgroundWork()
    pending = work.statistics(tensor, 1, work.write(tmp_path / "logits.safetensors", tensor))
    threading.Timer(0.2, released.set).start()
    work.wait()
    assert computed_on == [threading.current_thread().name]
    options = PrintOptions.current()
    assert pending.result(options) == statistics_from(
        _on_one_thread(fused_statistics, tensor, 1), tensor, options
    )


def test_statistics_the_worker_has_not_started_are_taken_over_at_the_next_recording_step(
    tmp_path, monkeypatch
):
    """A worker behind the forward (its core busy) would hold each queued tensor, freed by the model
    or not, until it got to it: the forward's thread computes them instead."""
    released = threading.Event()
    monkeypatch.setattr(background, "write_tensor_file", lambda path, data: released.wait())
    computed_on = []
    numbers = background.numbers_off_thread
    monkeypatch.setattr(
        background,
        "numbers_off_thread",
        lambda *arguments: computed_on.append(threading.current_thread().name) or numbers(*arguments),
    )
    work = BackgroundWork()
    work.write(tmp_path / "first.safetensors", torch.zeros(1))  # the worker is busy with it
    tensor = torch.randn(100)
    pending = work.statistics(tensor, 1)
    work.take_over()
    assert computed_on == [threading.current_thread().name]
    released.set()
    work.wait()
    assert computed_on == [threading.current_thread().name]  # not computed again by the worker
    options = PrintOptions.current()
    assert pending.result(options) == statistics_from(fused_statistics(tensor, 1), tensor, options)


def test_a_warm_trace_makes_no_statistics_buffer(tmp_path, monkeypatch):
    """The buffers of the float64 pass are made in the first trace: a later one whose forward's
    thread and worker reduce at the same moment for the first time grew its peak by one."""
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
    with model_addition_debugger_context(model, debug_path=tmp_path / "first", use_repr=False):
        model(torch.randn(4, 16))
    made = []
    new_buffer = fused._new_buffer
    monkeypatch.setattr(fused, "_new_buffer", lambda: made.append(1) or new_buffer())
    in_use = [fused._buffer(), fused._buffer()]  # the forward's thread and the worker, at the same moment
    fused._free_buffers.extend(in_use)
    assert made == []


def test_a_reused_tensors_second_name_is_one_link_and_replaces_a_file_already_there(tmp_path, monkeypatch):
    """A hard link appears complete at once: a new name needs no temporary name and rename (one
    metadata operation per reused entry instead of two); an existing file is still replaced whole."""
    tensor = torch.arange(6, dtype=torch.float32)
    write_tensor_file(tmp_path / "a.safetensors", tensor)
    (tmp_path / "old.safetensors").write_bytes(b"an older file")
    renamed = []
    replace = os.replace
    monkeypatch.setattr(tensor_files.os, "replace", lambda *paths: renamed.append(paths) or replace(*paths))
    tensor_files.link_tensor_file(tmp_path / "a.safetensors", tmp_path / "b.safetensors")
    assert renamed == []
    tensor_files.link_tensor_file(tmp_path / "a.safetensors", tmp_path / "old.safetensors")
    assert len(renamed) == 1
    for name in ("b", "old"):
        assert torch.equal(load_file(tmp_path / f"{name}.safetensors")["data"], tensor)
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "a.safetensors",
        "b.safetensors",
        "old.safetensors",
    ]


def test_a_tensor_file_goes_straight_to_its_descriptor_and_survives_short_writes(tmp_path, monkeypatch):
    """No buffered file object between the tensor's memory and the file (its buffer and flushes
    cost about a tenth of a small file's write); a write that takes fewer bytes is continued."""
    tensor = torch.randn(3, 5)
    save_file({"data": tensor}, str(tmp_path / "theirs.safetensors"))
    calls = []
    write = os.write
    monkeypatch.setattr(tensor_files.os, "write", lambda fd, data: calls.append(1) or write(fd, data[:7]))
    write_tensor_file(tmp_path / "ours.safetensors", tensor)
    assert len(calls) > 2  # the header and the tensor's bytes, 7 bytes at a time
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()
