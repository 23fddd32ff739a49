"""A regular (non-editable) install works outside any checkout: scan, report, compare, check-skips.

The package is built from a copy of the project and installed with ``--no-deps`` into a fresh venv
that sees the already-installed dependencies (torch, libcst, pandas, ...) through a ``.pth`` line,
but not this checkout: the editable install's finder lives in a ``.pth`` file of the project venv,
which the fresh venv does not process, and every command runs from a temporary directory.
"""

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mini_transformers"
TRACE = """
import sys, torch
from model_debugging import model_addition_debugger_context

class Toy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x).relu()

torch.manual_seed(0)
model = Toy()
for debug_path in sys.argv[1:]:
    with model_addition_debugger_context(model, debug_path=debug_path):
        model(torch.ones(2, 4))
"""


def _git(repo: Path, *args: str) -> None:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    subprocess.run(command, check=True, capture_output=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The ``bin`` folder of a fresh venv holding a regular install of this project."""
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    shutil.copytree(
        ROOT / "model_debugging", source / "model_debugging", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False)
    new_site = Path(sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)}))
    # the dependencies already installed here, without the project itself
    (new_site / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    python = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps"]
    subprocess.run([*pip, "--no-build-isolation", str(source)], check=True, capture_output=True, cwd=work)
    shutil.rmtree(source)  # nothing may come from the source tree after the install
    return env_dir / "bin"


def _run(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
        "HOME": str(cwd),
        "XDG_CACHE_HOME": str(cwd / "cache"),
    }
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd, env=env
    )


def test_the_package_comes_from_the_install(installed, tmp_path):
    where = _run(
        installed, tmp_path, "python", "-c", "import model_debugging; print(model_debugging.__file__)"
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(installed.parent)) and str(ROOT) not in where.stdout


def test_scan_report_compare_and_check_skips_outside_a_checkout(installed, tmp_path):
    repo = tmp_path / "transformers"
    shutil.copytree(EXAMPLE, repo)
    scan = _run(installed, tmp_path, "model-debugging", "scan", "--repo", str(repo), "--output_dir", "out")
    assert scan.returncode == 0, scan.stderr
    report = _run(
        installed, tmp_path, "model-debugging", "report", "--current", "out/all_tests_scan_result.json"
    )
    assert report.returncode == 0 and "Most skipped tests" in report.stdout, report.stderr

    trace = _run(installed, tmp_path, "python", "-c", TRACE, str(tmp_path / "a"), str(tmp_path / "b"))
    assert trace.returncode == 0, trace.stderr
    compare = _run(installed, tmp_path, "model-debugging", "compare", "a", "b")
    assert compare.returncode == 0, compare.stdout + compare.stderr

    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    model = repo / "tests" / "models" / "tiny_llama" / "test_modeling_tiny_llama.py"
    # test_greedy_generate: no model skips it yet
    model.write_text(
        model.read_text()
        + textwrap.indent(
            '\n@unittest.skip("generation is fused")\ndef test_greedy_generate(self):\n    pass\n', "    "
        )
    )
    check = _run(installed, tmp_path, "model-debugging", "check-skips", "--repo", str(repo), "--base", "main")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "test_greedy_generate" in check.stdout and "tiny_llama" in check.stdout
    assert "generation is fused" in check.stdout and "rarely skipped" in check.stdout
