"""No command destroys a file it was not asked to write, and every output lands where its path leads.

Each output option of compare, view, replay, report, scan and check-skips is pointed at the
command's own inputs (a trace's JSON files, its extra file, a tensor file; through a symlink or a
hard link; a scan result; a config; a source file of the checkout): one line, exit 2, nothing changed. Outputs pointed at a symlink,
a FIFO, a character device or /dev/stdout are written through, and the link, FIFO or device is
still what it was.
"""

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from model_debugging import model_addition_debugger_context
from model_debugging.cli import main
from model_debugging.reporting.atomic import atomic_write_text
from tests.replay import toys
from tests.skips.conftest import COMMON, write_tree

TOY = "tests.replay.toys:build_model"


def trace_toy(directory, factor=1.0):
    toys.EXTRA_FACTOR = factor
    try:
        model = toys.build_model()
        with model_addition_debugger_context(
            model, debug_path=directory, use_repr=False, record_functions=["scale_and_shift"]
        ):
            model(toys.toy_inputs())
    finally:
        toys.EXTRA_FACTOR = 1.0
    return directory


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = tmp_path_factory.mktemp("traces")
    return trace_toy(root / "reference"), trace_toy(root / "candidate", factor=3.0)


@pytest.fixture
def traces(pristine, tmp_path):
    """A fresh copy of a reference and a diverging candidate trace (with an extra file and tensor files)."""
    copies = []
    for source in pristine:
        copy = tmp_path / source.name
        copy.mkdir()
        for path in source.iterdir():
            (copy / path.name).write_bytes(path.read_bytes())
        copies.append(copy)
    return copies


def snapshot(*directories):
    """Every file's bytes, and each directory's modification time: a refused output makes no probe
    file in a trace's directory either."""
    files = {path: path.read_bytes() for directory in directories for path in sorted(directory.iterdir())}
    return files, [directory.stat().st_mtime_ns for directory in directories]


def one_line_error(capsys, prog, *expected):
    error = capsys.readouterr().err
    assert len(error.splitlines()) == 1, error
    assert error.startswith(f"model-debugging {prog}: error: "), error
    for part in expected:
        assert part in error, error
    return error


TRACE_FILES = [
    "Toy_debug_tree_FULL_TENSORS.json",
    "Toy_debug_tree_SUMMARY.json",
    "Toy_debug_tree_EXTRA.json",
    "Toy.embed_outputs.safetensors",
]


@pytest.mark.parametrize("option", ["--json", "--markdown", "--plot", "--save_renames"])
@pytest.mark.parametrize("name", TRACE_FILES)
@pytest.mark.parametrize("side", [0, 1])
def test_compare_refuses_every_output_onto_a_file_of_either_trace(traces, capsys, option, name, side):
    before = snapshot(*traces)
    target = traces[side] / name
    assert main(["compare", str(traces[0]), str(traces[1]), option, str(target)]) == 2
    role = ("reference", "candidate")[side]
    one_line_error(capsys, "compare", f"{option} {target} is a file of the {role} trace")
    assert snapshot(*traces) == before


def test_the_extra_file_name_of_a_trace_without_one_is_refused_too(traces, capsys):
    """Writing it would make the trace unreadable: it is a name the trace reads when present."""
    (traces[0] / "Toy_debug_tree_EXTRA.json").unlink()
    target = traces[0] / "Toy_debug_tree_EXTRA.json"
    assert main(["compare", str(traces[0]), str(traces[1]), "--json", str(target)]) == 2
    one_line_error(capsys, "compare", "is a file of the reference trace")
    assert not target.exists()


@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_a_link_to_a_trace_file_is_refused(traces, tmp_path, capsys, link):
    before = snapshot(*traces)
    target = traces[1] / "Toy_debug_tree_FULL_TENSORS.json"
    alias = tmp_path / "report.json"
    (os.symlink if link == "symlink" else os.link)(target, alias)
    assert main(["compare", str(traces[0]), str(traces[1]), "--json", str(alias)]) == 2
    one_line_error(capsys, "compare", f"--json {alias} is a file of the candidate trace ({target})")
    assert snapshot(*traces) == before
    assert alias.is_symlink() == (link == "symlink")


def test_compare_refuses_its_config_and_two_options_naming_one_file(traces, tmp_path, capsys):
    config = tmp_path / "renames.yaml"
    config.write_text("renames: []\n")
    assert main(["compare", *map(str, traces), "--config", str(config), "--save_renames", str(config)]) == 2
    one_line_error(capsys, "compare", "is the --config file")
    assert config.read_text() == "renames: []\n"
    out = tmp_path / "out.json"
    assert (
        main(["compare", *map(str, traces), "--json", str(out), "--markdown", f"{tmp_path}/./out.json"]) == 2
    )
    one_line_error(capsys, "compare", "--json and --markdown name the same file")
    assert not out.exists()


@pytest.mark.parametrize("name", TRACE_FILES)
def test_view_refuses_a_page_onto_a_file_of_either_trace(traces, capsys, name):
    before = snapshot(*traces)
    for args in ([str(traces[1])], [str(traces[1]), "--compare", str(traces[0])]):
        target = traces[0 if "--compare" in args else 1] / name
        assert main(["view", *args, "--output", str(target)]) == 2
        one_line_error(capsys, "view", f"--output {target} is a file of the")
    assert snapshot(*traces) == before


def test_view_refuses_a_default_page_that_links_to_a_trace_file(traces, capsys):
    page = traces[0] / "trace.html"
    page.symlink_to(traces[0] / "Toy_debug_tree_SUMMARY.json")
    before = snapshot(traces[0])
    assert main(["view", str(traces[0])]) == 2
    one_line_error(capsys, "view", "is a file of the trace")
    assert snapshot(traces[0]) == before


@pytest.mark.parametrize("name", TRACE_FILES)
def test_replay_refuses_json_onto_its_traces_and_its_model_script(traces, tmp_path, capsys, name):
    before = snapshot(*traces)
    for args, target in (
        ([str(traces[0])], traces[0] / name),
        ([str(traces[0]), "--compare", str(traces[1])], traces[1] / name),
        ([str(traces[0]), "--noise_from", str(traces[1])], traces[1] / name),
    ):
        assert main(["replay", *args, "--model", TOY, "--json", str(target)]) == 2
        one_line_error(capsys, "replay", f"--json {target} is a file of the")
    script = tmp_path / "port.py"
    script.write_text("from tests.replay.toys import build_model\n")
    assert main(["replay", str(traces[0]), "--model", f"{script}:build_model", "--json", str(script)]) == 2
    one_line_error(capsys, "replay", "is the --model script")
    assert script.read_text() == "from tests.replay.toys import build_model\n"
    assert snapshot(*traces) == before


SCAN = {
    "test_a": {"origin": "common", "models_ran": ["bert"], "models_skipped": [], "skipped_proportion": 0.0}
}


@pytest.mark.parametrize("option", ["--markdown", "--csv", "--plot"])
def test_report_refuses_its_outputs_onto_the_scan_results(tmp_path, capsys, option):
    previous, current = tmp_path / "previous.json", tmp_path / "current.json"
    for path in (previous, current):
        path.write_text(json.dumps(SCAN))
    link = tmp_path / "link.md"
    link.symlink_to(previous)
    for target, which in ((current, "--current"), (link, "--previous")):
        assert (
            main(["report", "--previous", str(previous), "--current", str(current), option, str(target)]) == 2
        )
        one_line_error(capsys, "report", f"{option} {target} is the {which} file")
    assert json.loads(previous.read_text()) == json.loads(current.read_text()) == SCAN


def test_check_skips_refuses_markdown_onto_its_config_before_scanning(tmp_path, capsys):
    config = tmp_path / "skip_report.yaml"
    config.write_text("pr_check:\n  min_skipped_share: 0.5\n")
    args = ["check-skips", "--repo", str(tmp_path / "no_repo"), "--base", "main", "--config", str(config)]
    assert main([*args, "--markdown", str(config)]) == 2
    one_line_error(capsys, "check-skips", f"--markdown {config} is the --config file")
    assert config.read_text() == "pr_check:\n  min_skipped_share: 0.5\n"


def test_check_skips_refuses_markdown_onto_a_test_file_of_the_checkout(tmp_path, capsys):
    test_file = tmp_path / "repo" / "tests" / "test_modeling_common.py"
    test_file.parent.mkdir(parents=True)
    test_file.write_text("class ModelTesterMixin:\n    pass\n")
    args = ["check-skips", "--repo", str(tmp_path / "repo"), "--base", "main"]
    assert main([*args, "--markdown", str(test_file)]) == 2
    one_line_error(
        capsys, "check-skips", f"--markdown {test_file} is a .py file of the checkout's tests/ folder"
    )
    assert test_file.read_text() == "class ModelTesterMixin:\n    pass\n"


def test_scan_refuses_an_output_file_that_links_to_a_file_it_reads(tmp_path, capsys):
    source = tmp_path / "repo" / "src" / "transformers" / "modeling_utils.py"
    source.parent.mkdir(parents=True)
    source.write_text("class PreTrainedModel:\n    pass\n")
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    (output_dir / "all_tests_scan_result.json").symlink_to(source)
    assert main(["scan", "--repo", str(tmp_path / "repo"), "--output_dir", str(output_dir)]) == 2
    one_line_error(capsys, "scan", "all_tests_scan_result.json is a .py file of the checkout's src/ folder")
    assert source.read_text() == "class PreTrainedModel:\n    pass\n"


def test_scan_writes_its_results_into_the_checkout_again_and_again(tmp_path):
    model = "from ...test_modeling_common import ModelTesterMixin\n\nclass BertModelTest(ModelTesterMixin):\n    pass\n"
    files = {"tests/test_modeling_common.py": COMMON, "tests/models/bert/test_modeling_bert.py": model}
    repo = write_tree(tmp_path / "repo", files)
    for _ in range(2):  # the second run replaces its own results, which the scan does not read
        assert main(["scan", "--repo", str(repo), "--output_dir", str(repo / "tests"), "--no_cache"]) == 0
    assert json.loads((repo / "tests" / "all_tests_scan_result.json").read_text())


def _repo_with_one_model(root: Path) -> Path:
    model = "from ...test_modeling_common import ModelTesterMixin\n\nclass BertModelTest(ModelTesterMixin):\n    pass\n"
    return write_tree(
        root, {"tests/test_modeling_common.py": COMMON, "tests/models/bert/test_modeling_bert.py": model}
    )


@pytest.mark.parametrize("at", ["the result file", "the output folder", "a folder above it"])
def test_scan_refuses_a_symlink_to_nothing_where_it_writes(tmp_path, capsys, at):
    """Written through, the link made the folders of the place it names and the file there: a
    place the user never named. One line names the link and where it points; nothing is made."""
    repo = _repo_with_one_model(tmp_path / "repo")
    gone = tmp_path / "gone" / "deeper"
    output_dir = tmp_path / "out" / "scan"
    if at == "the result file":
        output_dir.mkdir(parents=True)
        link = output_dir / "all_tests_scan_result.json"
        link.symlink_to(gone / "result.json")
    elif at == "the output folder":
        output_dir.parent.mkdir()
        link = output_dir
        link.symlink_to(gone)
    else:
        link = output_dir.parent
        link.symlink_to(gone)
    assert main(["scan", "--repo", str(repo), "--output_dir", str(output_dir), "--no_cache"]) == 2
    one_line_error(
        capsys, "scan", f"{link} is a symbolic link to '{os.readlink(link)}', which does not exist"
    )
    assert not (tmp_path / "gone").exists() and link.is_symlink()


def test_report_and_check_skips_refuse_markdown_at_a_symlink_to_nothing(tmp_path, capsys):
    current = tmp_path / "current.json"
    current.write_text(json.dumps(SCAN))
    link = tmp_path / "trend.md"
    link.symlink_to(tmp_path / "gone" / "trend.md")
    expected = (
        f"--markdown {link} is a symbolic link to '{tmp_path / 'gone' / 'trend.md'}', which does not exist"
    )
    assert main(["report", "--current", str(current), "--markdown", str(link)]) == 2
    one_line_error(capsys, "report", expected)
    args = ["check-skips", "--repo", str(tmp_path / "no_repo"), "--base", "main", "--markdown", str(link)]
    assert main(args) == 2  # before anything of the checkout is read
    one_line_error(capsys, "check-skips", expected)
    assert not (tmp_path / "gone").exists()


def test_a_symlink_to_a_regular_file_writes_that_file_and_stays_a_link(traces, tmp_path, capsys):
    real = tmp_path / "elsewhere" / "report.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(real)
    assert main(["compare", *map(str, traces), "--json", str(link)]) == 1  # the candidate diverges
    assert link.is_symlink() and link.resolve() == real
    assert json.loads(real.read_text())["equivalent"] is False
    assert sorted(path.name for path in real.parent.iterdir()) == ["report.json"]  # no temporary left


def test_a_symlink_to_a_character_device_is_written_through(traces, tmp_path):
    link = tmp_path / "null.json"
    link.symlink_to("/dev/null")
    assert main(["compare", *map(str, traces), "--json", str(link)]) == 1
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_with_a_reader_receives_the_output_and_stays_a_fifo(traces, tmp_path):
    fifo = tmp_path / "out.md"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    assert main(["compare", *map(str, traces), "--markdown", str(fifo)]) == 1
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert main(["compare", *map(str, traces), "--markdown", str(tmp_path / "out.txt")]) == 1
    assert received == [(tmp_path / "out.txt").read_text()]


def test_a_fifo_nobody_reads_is_an_error_not_a_hang(traces, tmp_path, capsys):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    assert main(["compare", *map(str, traces), "--json", str(fifo)]) == 2
    one_line_error(capsys, "compare", f"cannot write --json {fifo}: no process is reading this FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dev_stdout_is_written_through_and_stays_a_link(traces, capfd):
    assert os.path.islink("/dev/stdout")
    assert main(["compare", *map(str, traces), "--json", "/dev/stdout"]) == 1
    out = capfd.readouterr().out
    assert out.startswith("{\n") and '"equivalent": false' in out
    assert os.path.islink("/dev/stdout")  # the suite runs as root: replacing it was possible


def test_dev_stdout_in_a_pipe_as_a_user_runs_it(traces):
    """A separate process whose stdout is a pipe: the JSON goes down the pipe, then the report."""
    run = subprocess.run(
        [sys.executable, "-m", "model_debugging.cli", "compare", *map(str, traces), "--json", "/dev/stdout"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    document, end = json.JSONDecoder().raw_decode(run.stdout)
    assert document["equivalent"] is False
    assert "Toy.head" in run.stdout[end:]  # the terminal report follows
    assert os.path.islink("/dev/stdout")


def test_outputs_that_are_no_file_to_write_are_refused_before_any_work(traces, tmp_path, capsys):
    sock_path = tmp_path / "socket"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        assert main(["compare", *map(str, traces), "--json", str(sock_path)]) == 2
    one_line_error(capsys, "compare", "is not a regular file")
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    assert main(["compare", *map(str, traces), "--json", str(loop)]) == 2
    one_line_error(capsys, "compare", "--json")


def test_the_atomic_writer_never_replaces_a_special_file(tmp_path, capfd):
    atomic_write_text("/dev/stdout", "to the terminal or pipe\n")
    assert capfd.readouterr().out == "to the terminal or pipe\n"
    assert os.path.islink("/dev/stdout")
    with pytest.raises(OSError, match="is a directory"):
        atomic_write_text(tmp_path, "x")
    target = tmp_path / "real.txt"
    Path(tmp_path / "link.txt").symlink_to(target)  # a dangling link: the file it names is created
    atomic_write_text(tmp_path / "link.txt", "through the link")
    assert target.read_text() == "through the link" and (tmp_path / "link.txt").is_symlink()


# /sys refuses new files even to root, for whom os.access says yes; /proc has no folder to make
SYS_FOLDER, PROC_FOLDER = Path("/sys/kernel"), Path("/proc")
needs_sys = pytest.mark.skipif(not SYS_FOLDER.is_dir(), reason="no /sys/kernel on this system (Linux only)")
needs_proc = pytest.mark.skipif(not PROC_FOLDER.is_dir(), reason="no /proc on this system (Linux only)")


@needs_sys
@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("compare", "--json"),
        ("compare", "--markdown"),
        ("compare", "--plot"),
        ("view", "--output"),
        ("replay", "--json"),
    ],
)
def test_an_output_in_a_folder_that_takes_no_file_is_refused_before_any_trace_is_read(
    traces, capsys, command, option
):
    target = SYS_FOLDER / "out.png"
    args = {
        "compare": [*map(str, traces)],
        "view": [str(traces[0])],
        "replay": [str(traces[0]), "--model", TOY],
    }
    assert main([command, *args[command], option, str(target)]) == 2
    one_line_error(capsys, command, f"{option} {target}: cannot create files in {SYS_FOLDER}: ")
    assert not target.exists()


@needs_proc
def test_an_output_folder_that_cannot_be_made_is_refused_before_the_port_runs(tmp_path, capsys):
    script = tmp_path / "port.py"
    script.write_text("raise SystemExit('the script ran')\n")
    assert main(["debug-port", str(script), "--output_dir", "/proc/debug_port"]) == 2
    one_line_error(
        capsys, "debug-port", "--output_dir /proc/debug_port: cannot create the folder /proc/debug_port"
    )


def test_a_plot_format_matplotlib_cannot_write_is_refused_before_any_trace_is_read(traces, tmp_path, capsys):
    assert main(["compare", *map(str, traces), "--plot", str(tmp_path / "divergence.txt")]) == 2
    one_line_error(capsys, "compare", "--plot", "matplotlib cannot write .txt files", "png", "svg")
    assert list(tmp_path.glob("divergence*")) == []
