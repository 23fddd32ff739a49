"""A user's Python file given to ``debug-port SCRIPT`` or ``replay --model``: a file that cannot be
loaded, or whose function raises, is one line naming the file (and its line), exit 2."""

import sys
import textwrap

import pytest

from model_debugging.cli import main
from tests.replay import toys
from tests.replay.test_command import trace_toy

# (file content, what the error line says after the file's path); None: the file is not written
BAD_FILES = {
    "missing": (None, ": no such file"),
    "syntax error": (
        "import torch\n\ndef build_model(:\n    pass\n",
        ", line 3: importing it raised SyntaxError",
    ),
    "raising at import": (
        "import torch\n\nSIZE = 4\nraise RuntimeError('no weights here')\n",
        ", line 4: importing it raised RuntimeError: no weights here",
    ),
    "a missing sibling": (
        "from my_weights import load\n",
        ", line 1: importing it raised ModuleNotFoundError",
    ),
    "raising when called": (
        textwrap.dedent("""
            def _load():
                raise FileNotFoundError('weights.bin')


            def build_model():
                return _load()


            build_reference = build_port = build_inputs = build_model
        """),
        ", line 3: build",
    ),
}


@pytest.fixture(scope="module")
def reference_trace(tmp_path_factory):
    return trace_toy(toys.build_model(), tmp_path_factory.mktemp("reference"))


@pytest.mark.parametrize("command", ["replay", "debug-port"])
@pytest.mark.parametrize("case", list(BAD_FILES))
def test_a_bad_script_is_one_line_naming_the_file_and_line_and_exit_2(
    reference_trace, tmp_path, capsys, command, case
):
    text, said = BAD_FILES[case]
    script = tmp_path / "my_port.py"
    if text is not None:
        script.write_text(text)
    path_before, modules_before = list(sys.path), set(sys.modules)
    if command == "replay":
        argv = ["replay", str(reference_trace), "--model", str(script)]
    else:
        argv = ["debug-port", str(script), "--output_dir", str(tmp_path / "out")]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    assert f"{script}{said}" in error, error
    if case == "raising when called":
        assert "raised FileNotFoundError: weights.bin" in error
    assert sys.path == path_before and "my_port" not in sys.modules
    assert not {name for name in set(sys.modules) - modules_before if "my_port" in name}


def test_a_second_script_in_the_same_process_imports_its_own_siblings(tmp_path):
    """A porter's second run (another folder, or an edited sibling) must not reuse the first run's
    ``my_port``: the siblings a script imported are unloaded with it."""
    from model_debugging.script_loading import loaded_script

    seen = []
    for number, folder in enumerate((tmp_path / "first", tmp_path / "second"), start=1):
        folder.mkdir()
        (folder / "my_port.py").write_text(f"VERSION = {number}\n")
        (folder / "check_port.py").write_text("from my_port import VERSION\n")
        with loaded_script(str(folder / "check_port.py")) as script:
            seen.append(script.VERSION)
        assert "my_port" not in sys.modules
    assert seen == [1, 2]
    assert "model_debugging.script_loading" in sys.modules  # loaded before: kept


def test_a_package_installed_in_a_venv_inside_the_script_folder_stays_loaded(tmp_path, monkeypatch):
    """``python -m venv .venv`` in the project folder: what the script imports from it is not the
    user's code, and stays loaded like any installed package."""
    from model_debugging.script_loading import loaded_script

    site_packages = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    (site_packages / "installed_helper").mkdir(parents=True)
    (site_packages / "installed_helper" / "__init__.py").write_text("NAME = 'installed'\n")
    monkeypatch.syspath_prepend(str(site_packages))
    (tmp_path / "my_port.py").write_text("VERSION = 1\n")
    (tmp_path / "check_port.py").write_text("import installed_helper\nfrom my_port import VERSION\n")
    try:
        with loaded_script(str(tmp_path / "check_port.py")) as script:
            assert script.installed_helper.NAME == "installed"
        assert "installed_helper" in sys.modules and "my_port" not in sys.modules
    finally:
        sys.modules.pop("installed_helper", None)
